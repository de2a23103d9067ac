// The oracle of test_gopclntab: Go's own debug/gosym (not cfiprof's code) names
// every function entry of an ELF file and three pcs inside each function, one line
// per pc: "pc<TAB>function<TAB>file<TAB>line" (pc in hex).
// Usage: gosym_oracle FILE
package main

import (
	"bufio"
	"debug/elf"
	"debug/gosym"
	"fmt"
	"os"
)

func main() {
	f, err := elf.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pcln, err := f.Section(".gopclntab").Data()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(pcln, f.Section(".text").Addr))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, fn := range tab.Funcs {
		for k := uint64(0); k < 4; k++ {
			pc := fn.Entry + (fn.End-fn.Entry)*k/4
			file, line, g := tab.PCToLine(pc)
			if g == nil {
				continue
			}
			fmt.Fprintf(w, "%x\t%s\t%s\t%d\n", pc, g.Name, file, line)
		}
	}
}
