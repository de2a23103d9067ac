#!/bin/sh
# Writes the man pages cfiprof.1 and cfiprof-COMMAND.1 into OUTDIR from the
# binary's own --help (argp), through help2man, so they never drift from the
# options.  contrib/man/NAME.h2m adds what --help does not say (exit status,
# files, see also).  Usage: gen-man.sh CFIPROF OUTDIR VERSION
set -eu
bin=$1 out=$2 version=$3
here=$(dirname "$0")
mkdir -p "$out"

# the one-line descriptions are the ones `cfiprof --help` lists
commands=$("$bin" --help | awk '/^Commands:/ { on = 1; next } on && NF { print $1 } !NF { on = 0 }')
describe() {
	"$bin" --help | awk -v c="$1" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }'
}

# help2man's page, made to read as a man page: argp's option groups become
# subsections, examples keep their lines, the page is named cfiprof-COMMAND.
polish() {
	awk -v page="$1" -v name="$2" '
	/^\.TH / { $2 = toupper(page); print; next }
	/^\.SH NAME$/ { print; getline; sub(/^[^\\]*\\-/, name " \\-"); print; next }
	/^\.SH / { if (ex) print ".fi\n.RE"; ex = ($0 == ".SH EXAMPLES"); print; if (ex) print ".RS\n.nf"; next }
	ex && /^\.(IP|PP|TP)$/ { next }
	/^\.SS ".*:"$/ { sub(/:"$/, "\""); print; next }
	/^\.TP$/ { tp = 1; next }
	tp { if (!opts && /^(\\fB)?\\-/) { print ".SH OPTIONS"; opts = 1 } print ".TP"; tp = 0 }
	/^\.IP$/ { held = 1; next }
	held && /:$/ && !/^\./ { sub(/:$/, ""); print ".SS \"" $0 "\""; held = 0; next }
	held { print ".IP"; held = 0 }
	{ print }
	END { if (ex) print ".fi\n.RE" }'
}

gen() { # PAGE NAME DESCRIPTION COMMAND...
	page=$1 name=$2 desc=$3
	shift 3
	inc=
	[ -f "$here/$page.h2m" ] && inc="--include=$here/$page.h2m"
	# help2man runs "$*" through the shell: a wrapper keeps the subcommand one word
	wrap=$(mktemp)
	printf '#!/bin/sh\nexec %s "$@"\n' "$*" >"$wrap"
	chmod +x "$wrap"
	ARGP_HELP_FMT=rmargin=79 help2man --no-info --no-discard-stderr --section=1 \
		--source="cfiprof $version" --manual="cfiprof manual" \
		--version-string="$version" --name="$desc" $inc "$wrap" | polish "$page" "$name" \
		>"$out/$page.1.tmp"
	rm -f "$wrap"
	mv "$out/$page.1.tmp" "$out/$page.1"
}

gen cfiprof cfiprof "profile user stacks unwound in the kernel from DWARF CFI" "$bin"
for c in $commands; do
	gen "cfiprof-$c" "cfiprof\\-$c" "$(describe "$c")" "$bin" "$c"
done
