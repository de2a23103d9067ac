#!/bin/sh
# Writes the man pages cfiprof.1 and cfiprof-COMMAND.1 into OUTDIR from the
# binary's own --help (argp), through help2man, so they never drift from the
# options, and from the pages of docs/ (contrib/man/pages says which), through
# md2roff.awk, so they say what the docs say.  contrib/man/NAME.h2m adds what
# neither has (see also).  Usage: gen-man.sh CFIPROF OUTDIR VERSION
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

# the docs pages of PAGE as roff: DESCRIPTION's text, a mark, the sections
docs_roff() {
	root=$here/../..
	pages=$(awk -v p="$1" '$1 == p { $1 = ""; print }' "$here/pages")
	for md in $pages; do
		base=${md##*/}
		primary=0
		[ "cfiprof-${base%.md}" = "$1" ] && primary=1
		awk -v primary=$primary -f "$here/md2roff.awk" "$root/$md" || return 1
	done
}

# help2man's page with the docs put in: their DESCRIPTION text before OPTIONS,
# their sections after it (before FILES, EXAMPLES, SEE ALSO)
merge() { # DOCS_ROFF
	awk -v docs="$1" '
	BEGIN {
		while ((getline l < docs) > 0) {
			if (l == ".\\\" md2roff: sections") { s = 1; continue }
			if (s) sec = sec l "\n"; else intro = intro l "\n"
		}
	}
	/^\.SH / {
		n = $0; sub(/^\.SH "?/, "", n); sub(/"$/, "", n)
		if (n == "OPTIONS" && !i) { printf "%s", intro; i = 1 }
		else if (n != "NAME" && n != "SYNOPSIS" && n != "DESCRIPTION" && n != "OPTIONS" && !d) {
			if (!i) printf "%s", intro
			printf "%s", sec; i = d = 1
		}
	}
	{ print }
	END { if (!i) printf "%s", intro; if (!d) printf "%s", sec }'
}

gen() { # PAGE NAME DESCRIPTION COMMAND...
	page=$1 name=$2 desc=$3
	shift 3
	inc=
	[ -f "$here/$page.h2m" ] && inc="--include=$here/$page.h2m"
	# help2man runs "$*" through the shell: a wrapper keeps the subcommand one word
	docs=$(mktemp)
	docs_roff "$page" >"$docs"
	wrap=$(mktemp)
	printf '#!/bin/sh\nexec %s "$@"\n' "$*" >"$wrap"
	chmod +x "$wrap"
	ARGP_HELP_FMT=rmargin=79 help2man --no-info --no-discard-stderr --section=1 \
		--source="cfiprof $version" --manual="cfiprof manual" \
		--version-string="$version" --name="$desc" $inc "$wrap" | polish "$page" "$name" |
		merge "$docs" >"$out/$page.1.tmp"
	rm -f "$wrap" "$docs"
	mv "$out/$page.1.tmp" "$out/$page.1"
}

gen cfiprof cfiprof "profile user stacks unwound in the kernel from DWARF CFI" "$bin"
for c in $commands; do
	gen "cfiprof-$c" "cfiprof\\-$c" "$(describe "$c")" "$bin" "$c"
done
