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

// Where Go's code starts, as the runtime takes it (moduledata.text): the
// pclntab header's textStart (Go 1.18+) when the linker set it. debug/gosym
// 1.19 takes the address given instead, and .text's is wrong where an
// external linker put C start code before Go's (cgo binaries: prometheus).
func textStart(f *elf.File, pcln []byte) uint64 {
	text := f.Section(".text").Addr
	if len(pcln) >= 8+3*8 && pcln[7] == 8 && (pcln[0] == 0xf0 || pcln[0] == 0xf1) {
		if v := f.ByteOrder.Uint64(pcln[8+2*8:]); v != 0 {
			return v
		}
	}
	return text
}

func main() {
	f, err := elf.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// a PIE's table is in its relro segment, as cmd/internal/objfile looks for it
	sect := f.Section(".gopclntab")
	if sect == nil {
		sect = f.Section(".data.rel.ro.gopclntab")
	}
	if sect == nil {
		fmt.Fprintln(os.Stderr, "no .gopclntab")
		os.Exit(1)
	}
	pcln, err := sect.Data()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(pcln, textStart(f, pcln)))
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
