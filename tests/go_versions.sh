#!/bin/bash
# make go-versions-test: the Go tests on binaries of Go toolchains newer than
# Debian's 1.19.  Each version in GO_VERSIONS (default 1.21 1.22 1.23) comes from
# Debian's bookworm-backports (golang-1.N-go, golang-1.N-src), fetched with an
# apt state of its own under OUT/go-versions and unpacked there (the system's
# sources and packages are not touched, the archive's signature is checked
# with debian-archive-keyring); the Go test programs are built with it into
# OUT/go-versions/1.N/progs and test_gopclntab, test_go_names and test_go_labels
# run on them: names and lines against that version's own debug/gosym, rows
# against its linker's .debug_frame, inline frames against its DWARF, goroutine
# labels as go tool pprof reads them.
set -u
OUT=${OUT:-build}
dir=$(realpath -m "$OUT/go-versions") # apt reads relative paths from /etc/apt
versions=${GO_VERSIONS:-1.21 1.22 1.23}
cfiprof=$(realpath "$OUT/cfiprof")
tests=$(realpath "$OUT/tests")
apt_opts=(-qq -o "Dir::Etc::SourceList=$dir/apt/sources.list" -o "Dir::Etc::SourceParts=$dir/apt/sources.list.d"
	-o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o APT::Sandbox::User=root)
mkdir -p "$dir/apt/sources.list.d" "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs" "$dir/root"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
	"http://deb.debian.org/debian bookworm-backports main" >"$dir/apt/sources.list"

updated=
status=0
for v in $versions; do
	root=$(realpath -m "$dir/root/usr/lib/go-$v")
	if [ ! -x "$root/bin/go" ]; then
		if [ -z "$updated" ]; then
			apt-get "${apt_opts[@]}" update || { echo "go-versions: apt-get update failed" >&2; exit 1; }
			updated=1
		fi
		(cd "$dir/debs" && apt-get "${apt_opts[@]}" download "golang-$v-go" "golang-$v-src") ||
			{ echo "go-versions: cannot fetch golang-$v from bookworm-backports" >&2; exit 1; }
		for deb in "$dir/debs/golang-$v-"*.deb; do
			dpkg -x "$deb" "$dir/root" || exit 1
		done
	fi
	o=$dir/$v
	make --no-print-directory -s OUT="$o" GO="GOROOT=$root $root/bin/go" \
		"$o/progs/gofib" "$o/progs/gofib_stripped" "$o/progs/gofib_pie" \
		"$o/progs/gosym_oracle" "$o/progs/gocgo_stripped" "$o/progs/golabels_stripped" \
		"$o/progs/golabels_cgo" "$o/progs/arm64/gofib" "$o/progs/arm64/gofib_stripped" ||
		{ status=1; continue; }
	echo "=== $("$root/bin/go" version)"
	for t in test_gopclntab test_go_names test_go_labels; do
		OUT=$o CFIPROF=$cfiprof "$tests/$t" | sed "s/^/go$v $t: /"
		[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
	done
done
[ $status -eq 0 ] && echo "go-versions: every test passed on Go $versions" ||
	echo "go-versions: failures above"
exit $status
