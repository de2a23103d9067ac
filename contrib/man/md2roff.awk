# Converts one page of docs/ (the Markdown these pages use) to man(7) roff, so
# the man pages say what the docs say, from the same file.  POSIX awk (mawk).
#
#   awk -v primary=1 -f md2roff.awk docs/record.md
#
# primary=1: the command's own page.  Its "# title" is dropped (help2man writes
# NAME), its text up to the first "## " heading goes to DESCRIPTION, and each
# "## " heading becomes a section (.SH), "### " a subsection (.SS); a "## Options"
# heading stays in DESCRIPTION, where help2man's option list follows it.
# primary=0: a page included in another's man page: "# title" becomes a section,
# "## " and "### " subsections.
#
# Output: the DESCRIPTION text, then a line MARK (below), then the sections;
# gen-man.sh puts each part in its place in help2man's page.
#
# The subset: ATX headings, paragraphs, "- " bullets (continued by indented
# lines), ``` fences, pipe tables, `code`, **bold**, *italic*, [text](link)
# (the text is kept), images (dropped).
BEGIN {
	MARK = ".\\\" md2roff: sections"
	insec = !primary
	if (insec)
		print MARK
	# ragged right: long code (metric names) leaves too few spaces to justify
	print ".ad l"
	print ".nh"
}

# roff-safe text: backslashes, hyphens (\- is the minus an option is typed
# with) and the few non-ASCII characters the pages use
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	gsub(/—/, "\\(em", s)
	gsub(/–/, "\\(en", s)
	gsub(/→/, "\\(->", s)
	gsub(/←/, "\\(<-", s)
	gsub(/↔/, "\\(<>", s)
	gsub(/µ/, "\\(mc", s)
	gsub(/×/, "\\(mu", s)
	gsub(/≈/, "\\(~~", s)
	gsub(/≤/, "\\(<=", s)
	gsub(/≥/, "\\(>=", s)
	gsub(/−/, "\\-", s)
	gsub(/─/, "\\(hy", s)
	gsub(/►/, ">", s)
	return s
}

# emphasis in text outside code: **bold**, *italic*; the state carries over
# code spans and lines (bold may hold code)
function emph(s,    out, c, n, i, j) {
	out = ""
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c != "*") {
			# a run at once: esc() matches characters of several bytes
			j = index(substr(s, i), "*")
			j = j ? i + j - 1 : n + 1
			out = out esc(substr(s, i, j - i))
			i = j - 1
		} else if (substr(s, i + 1, 1) == "*") {
			out = out (bold ? "\\fR" : "\\fB")
			bold = !bold
			i++
		} else if (c == "*" && !ital && i < n && substr(s, i + 1, 1) != " ") {
			out = out "\\fI"
			ital = 1
		} else if (c == "*" && ital && i > 1 && substr(s, i - 1, 1) != " ") {
			out = out "\\fR"
			ital = 0
		} else {
			out = out "*"
		}
	}
	return out
}

# code may be longer than a line (metric names with their labels): it may break
# after | and ,
function brk(s) {
	gsub(/\|/, "|\\\\:", s)
	gsub(/,/, ",\\\\:", s)
	return s
}

# a paragraph's inline markup: links keep their text, `code` is bold
function inl(s,    out, i, j, t) {
	while (match(s, /!?\[[^]]*\]\([^)]*\)/)) {
		t = substr(s, RSTART, RLENGTH)
		sub(/^!?\[/, "", t)
		sub(/\]\([^)]*\)$/, "", t)
		s = substr(s, 1, RSTART - 1) t substr(s, RSTART + RLENGTH)
	}
	out = ""
	bold = ital = 0
	while ((i = index(s, "`")) > 0) {
		j = index(substr(s, i + 1), "`")
		if (!j)
			break
		out = out emph(substr(s, 1, i - 1)) "\\fB" brk(esc(substr(s, i + 1, j - 1))) \
		      (bold ? "\\fB" : ital ? "\\fI" : "\\fR")
		s = substr(s, i + j + 1)
	}
	out = out emph(s)
	if (bold || ital)
		out = out "\\fR"
	return out
}

# one output line per input line; a line starting with . or ' would be a request
function put(s,    n, i, a) {
	n = split(s, a, "\n")
	for (i = 1; i <= n; i++) {
		sub(/^[ \t]+/, "", a[i])
		if (a[i] ~ /^[.']/)
			a[i] = "\\&" a[i]
		print a[i]
	}
}

function flush() {
	if (para == "")
		return
	print (bullet ? ".IP \\(bu 2" : ".PP")
	put(inl(para))
	para = ""
	bullet = 0
}

# a table row's cells (a | inside `code` is not a separator)
function cells(s, a,    n, i, c, cur, code) {
	sub(/^[ \t]*\|/, "", s)
	sub(/\|[ \t]*$/, "", s)
	n = 0
	cur = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "`")
			code = !code
		if (c == "|" && !code) {
			a[++n] = cur
			cur = ""
		} else
			cur = cur c
	}
	a[++n] = cur
	for (i = 1; i <= n; i++) {
		sub(/^[ \t]+/, "", a[i])
		sub(/[ \t]+$/, "", a[i])
	}
	return n
}

# a table as tagged paragraphs: the first cell the tag, the others below it,
# each after its column's name when there are more than two
function table(    r, n, k, c) {
	for (r = 2; r <= nrows; r++) {
		if (rows[r] ~ /^[ \t]*\|[ \t:|-]*$/)
			continue
		n = cells(rows[r], c)
		print ".TP"
		put(inl(c[1]))
		for (k = 2; k <= n; k++) {
			if (k > 2)
				print ".br"
			put(inl((ncols > 2 ? "*" head[k] "*: " : "") c[k]))
		}
	}
	print ".PP"
	nrows = 0
}

# a heading's name as a section title: upper case outside `code`
function title(s, upper,    out, i, j) {
	gsub(/\*\*/, "", s)
	out = ""
	while ((i = index(s, "`")) > 0 && (j = index(substr(s, i + 1), "`")) > 0) {
		out = out (upper ? toupper(substr(s, 1, i - 1)) : substr(s, 1, i - 1)) \
		      substr(s, i + 1, j - 1)
		s = substr(s, i + j + 1)
	}
	out = out (upper ? toupper(s) : s)
	gsub(/"/, "", out)
	return "\"" esc(out) "\""
}

fence {
	if ($0 ~ /^```/) {
		print ".fi"
		print ".RE"
		fence = 0
		next
	}
	s = esc($0)
	if (s ~ /^[.']/)
		s = "\\&" s
	print s
	next
}

nrows && !/^[ \t]*\|/ { table() }

/^```/ {
	flush()
	print ".PP"
	print ".RS 4"
	print ".nf"
	fence = 1
	next
}

/^[ \t]*\|/ {
	flush()
	rows[++nrows] = $0
	if (nrows == 1)
		ncols = cells($0, head)
	next
}

/^#+ / {
	flush()
	level = index($0, " ") - 1
	text = substr($0, level + 2)
	if (primary && level == 1)
		next
	if (primary && level == 2 && text == "Options")
		next
	if (!insec) {
		print MARK
		print ".ad l"
		print ".nh"
		insec = 1
	}
	if (level == 1 || (primary && level == 2))
		print ".SH " title(text, 1)
	else
		print ".SS " title(text, 0)
	next
}

/^!\[/ { next }

/^[ \t]*$/ {
	flush()
	next
}

/^- / {
	flush()
	bullet = 1
	para = substr($0, 3)
	next
}

{ para = (para == "" ? $0 : para "\n" $0) }

END {
	flush()
	if (nrows)
		table()
	if (fence) {
		print ".fi"
		print ".RE"
	}
	if (!insec)
		print MARK
}
