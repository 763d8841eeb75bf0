package jsondoc

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Doc is a state file: a top-level object some of whose members are arrays
// of records. The records are kept raw and only split out when a command
// needs them, so that appending one session to a file of ten thousand
// splices bytes instead of decoding and re-encoding the rest.
type Doc struct {
	Top    *Object
	arrays map[string]*Array
	names  []string // the arrays' names, in the order they were declared
	facts  Facts    // what the last Bytes wrote
	src    []byte   // the bytes parsed (nil for a new document)
	gaps   map[string]bool
	// blank are the ranges of src a trusted parse took as blank lines (a
	// gap's): writeGap shares them again without reading them
	blank [][2]int
}

// Array is a top-level array of raw records (each at depth 2 in the file).
// Until Elems is called it may be held unsplit: the array as read plus the
// records appended since.
type Array struct {
	raw     []byte // unsplit: the array as read
	rawOff  int    // offset of raw in the parsed document
	known   ArrayFacts
	split   bool
	elems   [][]byte
	offsets []int    // byte offset of each element in the parsed document (-1: new)
	pending [][]byte // unsplit: records appended since the read
}

// ArrayFacts are what a writer knows about an array it wrote, kept so that
// the next command need not scan the array: how many records, the largest
// record id (filled in by the domain package), and the byte range of the
// last record in the file.
type ArrayFacts struct {
	Count int    `json:"count"`
	MaxID int    `json:"max_id,omitempty"`
	Last  [2]int `json:"last"`
	Span  [2]int `json:"span"` // the whole array's byte range in the file
	// Digest names an index the domain package keeps of this version of
	// the array beside the file (filled in by the domain package).
	Digest string `json:"digest,omitempty"`
	// Gap is where the blank lines written after the array (see Gap) end,
	// when there are blankMin or more: a trusted parse takes them as
	// blank without reading them (0: none, or not known).
	Gap int `json:"gap,omitempty"`
}

// Facts are the ArrayFacts of a document's arrays.
type Facts map[string]ArrayFacts

// RecordDepth is the depth of a record inside a top-level array.
const RecordDepth = 2

// ParseDoc splits data (already checked with Check) into its members and
// the named arrays into raw records. A named array that is absent is created
// empty; one that is not an array is an *InvalidError.
func ParseDoc(data []byte, arrays ...string) (*Doc, error) {
	d, err := parseTop(data, arrays)
	if err != nil {
		return nil, err
	}
	for _, name := range arrays {
		if err := d.arrays[name].splitNow(name); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// ParseDocTrusted reads a document baton itself wrote, whose facts were
// recorded with it: the arrays stay unsplit until they are needed, and the
// top level is read around them without scanning them.
func ParseDocTrusted(data []byte, facts Facts, arrays ...string) (*Doc, error) {
	d, err := parseHollow(data, facts, arrays)
	if err != nil {
		return nil, err
	}
	for _, name := range arrays {
		a := d.arrays[name]
		if f, ok := facts[name]; ok && a.raw != nil {
			a.known = f
			continue
		}
		if err := a.splitNow(name); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// parseHollow parses the top level with the recorded array spans replaced
// by empty arrays, then puts the arrays' bytes back: the cost is that of
// the rest of the document, however long the arrays are.
func parseHollow(data []byte, facts Facts, arrays []string) (*Doc, error) {
	var cuts []cut
	for _, name := range arrays {
		f, ok := facts[name]
		sp := f.Span
		if !ok || sp[0] <= 0 || sp[1] > len(data) || sp[1]-sp[0] < 2 || data[sp[0]] != '[' || data[sp[1]-1] != ']' {
			return parseTop(data, arrays)
		}
		cuts = append(cuts, cut{name: name, s: sp[0], e: sp[1]})
		if sp[1] < len(data) && data[sp[1]] == ',' {
			if e := gapEnd(data, sp[1]+1, f.Gap); e > sp[1]+1 {
				cuts = append(cuts, cut{s: sp[1] + 1, e: e})
			}
		}
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].s < cuts[j].s })
	hollow := make([]byte, 0, 4096)
	prev := 0
	for i, c := range cuts {
		if c.s < prev {
			return parseTop(data, arrays)
		}
		hollow = append(hollow, data[prev:c.s]...)
		cuts[i].at = len(hollow)
		hollow = append(hollow, c.stand()...)
		prev = c.e
	}
	hollow = append(hollow, data[prev:]...)
	d, err := parseTop(hollow, arrays)
	if err != nil {
		return nil, err
	}
	d.src = data
	for _, c := range cuts { // each span is the value of its own member, not another's
		if i := d.Top.index(c.name); c.name != "" && (i < 0 || d.Top.Members[i].Offset != c.at) {
			return parseTop(data, arrays)
		}
	}
	// map hollow offsets back to data, and the arrays to their real bytes
	back := func(off int) int {
		shift := 0
		for _, c := range cuts {
			if off > c.s-shift {
				shift += (c.e - c.s) - len(c.stand())
			}
		}
		return off + shift
	}
	for i := range d.Top.Members {
		m := &d.Top.Members[i]
		m.Offset = back(m.Offset) // Raw stays the parsed copy: data may be a mapping the caller releases
	}
	for _, c := range cuts {
		if c.name == "" {
			d.blank = append(d.blank, [2]int{c.s, c.e})
			continue
		}
		i := d.Top.index(c.name)
		if i < 0 {
			return parseTop(data, arrays)
		}
		d.Top.Members[i].Raw, d.Top.Members[i].Offset = data[c.s:c.e:c.e], c.s
		d.arrays[c.name] = &Array{raw: data[c.s:c.e:c.e], rawOff: c.s}
	}
	return d, nil
}

// cut is a stretch of the data parseHollow leaves out.
type cut struct {
	name string // "": the blank lines of a gap after an array
	s, e int
	at   int // where what stands for it is in the hollow document
}

// stand is what stands for a cut in the hollow document.
func (c cut) stand() []byte {
	if c.name == "" {
		return []byte{'\n'}
	}
	return []byte("[]")
}

// blankMin is the shortest run of blank lines parseHollow leaves out.
const blankMin = 4 << 10

// gapEnd is blankRun, or the end the facts give (at) when it frames such
// a run as the writer left it: a newline at each end and the next
// member's indent after it. The run between is not read: the facts are
// those of the version the log vouches for, as the array's span is.
func gapEnd(data []byte, pos, at int) int {
	if at-pos >= blankMin && at+3 <= len(data) && data[pos] == '\n' && data[at-1] == '\n' && string(data[at:at+3]) == `  "` {
		return at
	}
	return blankRun(data, pos)
}

// blankRun returns the end of the blank lines (a gap: see Gap) at pos when
// they are blankMin or more and only the next member's indent follows
// them, else pos. They are found by the next quote, not scanned byte by
// byte.
func blankRun(data []byte, pos int) int {
	q := bytes.IndexByte(data[pos:], '"')
	if q < blankMin {
		return pos
	}
	end := pos + q
	for end > pos && data[end-1] == ' ' {
		end--
	}
	if !isNewlines(data[pos:end]) {
		return pos
	}
	return end
}

func parseTop(data []byte, arrays []string) (*Doc, error) {
	top, err := ParseObject(data, 0)
	if err != nil {
		return nil, &InvalidError{Msg: "the file must hold one JSON object: " + err.Error()}
	}
	d := &Doc{Top: top, arrays: map[string]*Array{}, names: arrays, src: data}
	for _, name := range arrays {
		a := &Array{split: true}
		if i := top.index(name); i >= 0 {
			m := top.Members[i]
			a = &Array{raw: m.Raw, rawOff: m.Offset}
		}
		d.arrays[name] = a
	}
	return d, nil
}

// splitNow splits an unsplit array into its records.
func (a *Array) splitNow(name string) error {
	if a.split {
		return nil
	}
	elems, offs, err := SplitArray(a.raw)
	if err != nil {
		return &InvalidError{Offset: a.rawOff, Path: name, Msg: err.Error()}
	}
	for j := range offs {
		offs[j] += a.rawOff
	}
	for _, p := range a.pending {
		elems = append(elems, p)
		offs = append(offs, -1)
	}
	a.elems, a.offsets, a.split, a.pending = elems, offs, true, nil
	return nil
}

// NewDoc returns an empty document with the named arrays.
func NewDoc(arrays ...string) *Doc {
	d := &Doc{Top: NewObject(0), arrays: map[string]*Array{}, names: arrays}
	for _, name := range arrays {
		d.arrays[name] = &Array{split: true}
		d.Top.SetRaw(name, []byte("[]"))
	}
	return d
}

// Array returns the named array (nil when it was not declared).
func (d *Doc) Array(name string) *Array { return d.arrays[name] }

// Bytes encodes the document with its arrays as they are now, ending in a
// newline, and notes the Facts of what it wrote.
func (d *Doc) Bytes() []byte { return bytes.Join(d.Segments(), nil) }

// Segments encodes the document as consecutive pieces, the large ones
// slices of the bytes it was read from, so that rewriting a long history
// does not copy it. It notes the Facts of what it wrote.
func (d *Doc) Segments() [][]byte {
	for _, name := range d.names { // keep every declared array a member
		if !d.Top.Has(name) {
			d.Top.SetRaw(name, []byte("[]"))
		}
	}
	var b segments
	d.facts = Facts{}
	b.writeString("{\n")
	for i, m := range d.Top.Members {
		b.writeString("  ")
		b.write(quote(m.Key))
		b.writeString(": ")
		if a, ok := d.arrays[m.Key]; ok {
			start := b.len()
			f := a.write(&b)
			f.Span = [2]int{start, b.len()}
			d.facts[m.Key] = f
		} else {
			b.write(m.Raw)
		}
		if i < len(d.Top.Members)-1 {
			b.writeByte(',')
			if d.gaps[m.Key] {
				d.writeGap(&b, i+1)
			}
		}
		b.writeByte('\n')
		if f, ok := d.facts[m.Key]; ok && d.gaps[m.Key] && b.len()-(f.Span[1]+1) >= blankMin {
			f.Gap = b.len() // the next member's indent follows
			d.facts[m.Key] = f
		}
	}
	b.writeString("}\n")
	return b.done()
}

// Gap keeps blank lines after the array name, so that records appended to
// it fill them and what follows the array (a long array after it) stays
// where it was in the file: the change is then a few bytes the commit
// patches in place. When the gap is used up it is made anew, sized to what
// follows (none when that is short: rewriting it costs little).
func (d *Doc) Gap(name string) {
	if d.gaps == nil {
		d.gaps = map[string]bool{}
	}
	d.gaps[name] = true
}

// gapFor is the size of a new gap before rest bytes.
func gapFor(rest int) int {
	if rest < 32<<10 {
		return 0
	}
	return min(rest/4, 1<<20)
}

// writeGap writes the blank lines before member next: to where it was in
// the parsed document when that is still ahead, else a new gap.
func (d *Doc) writeGap(b *segments, next int) {
	m := d.Top.Members[next]
	lead := "\n  " + string(quote(m.Key)) + ": "
	at := m.Offset
	if a, ok := d.arrays[m.Key]; ok && a.raw != nil {
		at = a.rawOff
	}
	if start := at - len(lead); d.src != nil && start >= b.len() && at <= len(d.src) && string(d.src[start:at]) == lead {
		if old := d.src[b.len():start]; d.isBlank(b.len(), start) || isNewlines(old) {
			b.share(old) // the old gap's own bytes, where they were: not copied
		} else {
			b.writeString(strings.Repeat("\n", start-b.len()))
		}
		return
	}
	rest := 0
	for _, later := range d.Top.Members[next:] {
		if a, ok := d.arrays[later.Key]; ok {
			rest += len(a.raw)
			for _, p := range a.pending {
				rest += len(p)
			}
			continue
		}
		rest += len(later.Raw)
	}
	b.writeString(strings.Repeat("\n", gapFor(rest)))
}

func isNewlines(p []byte) bool { return bytes.Count(p, []byte("\n")) == len(p) }

// isBlank says whether src[s:e] lies in blank lines the parse took as such.
func (d *Doc) isBlank(s, e int) bool {
	for _, r := range d.blank {
		if r[0] <= s && e <= r[1] {
			return true
		}
	}
	return false
}

// segments builds output from small writes and large shared pieces,
// keeping the running length for offsets.
type segments struct {
	parts [][]byte
	cur   []byte
	n     int
}

func (s *segments) len() int { return s.n }

func (s *segments) write(p []byte) {
	s.cur = append(s.cur, p...)
	s.n += len(p)
}

func (s *segments) writeString(p string) {
	s.cur = append(s.cur, p...)
	s.n += len(p)
}

func (s *segments) writeByte(c byte) {
	s.cur = append(s.cur, c)
	s.n++
}

// share appends p without copying it.
func (s *segments) share(p []byte) {
	if len(p) < 4096 {
		s.write(p)
		return
	}
	if len(s.cur) > 0 {
		s.parts = append(s.parts, s.cur)
		s.cur = nil
	}
	s.parts = append(s.parts, p)
	s.n += len(p)
}

func (s *segments) done() [][]byte {
	if len(s.cur) > 0 {
		s.parts = append(s.parts, s.cur)
	}
	return s.parts
}

// Facts returns the facts of the arrays as the last Bytes wrote them.
func (d *Doc) Facts() Facts { return d.facts }

// ReadFacts are the facts of the document as it was parsed (call it before
// any change): for each array split as read (nothing appended), its record
// count, the byte range of its last record and its own range in the parsed
// data. MaxID is left to the domain package. A reader that validated a file
// keeps them for the readers after it.
func (d *Doc) ReadFacts() Facts {
	out := Facts{}
	for name, a := range d.arrays {
		if !a.split || a.raw == nil || len(a.pending) > 0 {
			continue
		}
		n := len(a.elems)
		f := ArrayFacts{Count: n, Span: [2]int{a.rawOff, a.rawOff + len(a.raw)}}
		if n > 0 {
			if a.offsets[n-1] < 0 {
				continue // a record appended since the parse
			}
			f.Last = [2]int{a.offsets[n-1], a.offsets[n-1] + len(a.elems[n-1])}
		}
		out[name] = f
	}
	return out
}

// write encodes the array at depth 1 into b and returns its facts.
func (a *Array) write(b *segments) ArrayFacts {
	start := b.len()
	if a.split {
		return a.writeSplit(b)
	}
	f := ArrayFacts{Count: a.known.Count + len(a.pending)}
	if len(a.pending) == 0 {
		b.share(a.raw)
		if a.known.Count > 0 {
			shift := start - a.rawOff
			f.Last = [2]int{a.known.Last[0] + shift, a.known.Last[1] + shift}
		}
		return f
	}
	body := bytes.TrimRight(a.raw, " \t\r\n")
	body = bytes.TrimRight(body[:len(body)-1], " \t\r\n") // drop the closing ]
	b.share(body)
	sep := ",\n    "
	if a.known.Count == 0 {
		sep = "\n    "
	}
	for _, e := range a.pending {
		b.writeString(sep)
		f.Last = [2]int{b.len(), b.len() + len(e)}
		b.write(e)
		sep = ",\n    "
	}
	b.writeString("\n  ]")
	return f
}

// writeSplit writes a split array record by record. Runs of records as
// they were read, laid out as baton lays them out, are passed through as
// the bytes read (shared, not copied): a change to one record of ten
// thousand writes the others as they were.
func (a *Array) writeSplit(b *segments) ArrayFacts {
	f := ArrayFacts{Count: len(a.elems)}
	if len(a.elems) == 0 {
		b.writeString("[]")
		return f
	}
	b.writeString("[\n")
	runS, runE := -1, -1 // a run of a.raw passed through: a.raw[runS:runE]
	flush := func() {
		if runS >= 0 {
			b.share(a.raw[runS:runE])
		}
		runS, runE = -1, -1
	}
	for i, e := range a.elems {
		sep := ",\n"
		if i == len(a.elems)-1 {
			sep = "\n"
			at := b.len() + max(runE-runS, 0) + len("    ")
			f.Last = [2]int{at, at + len(e)}
		}
		if p, ok := a.asRead(i); ok && p >= 4 && string(a.raw[p-4:p]) == "    " &&
			p+len(e)+len(sep) <= len(a.raw) && string(a.raw[p+len(e):p+len(e)+len(sep)]) == sep {
			if runS < 0 || runE != p-4 {
				flush()
				runS = p - 4
			}
			runE = p + len(e) + len(sep)
			continue
		}
		flush()
		b.writeString("    ")
		b.write(e)
		b.writeString(sep)
	}
	flush()
	b.writeString("  ]")
	return f
}

// asRead returns where record i lies in a.raw when it is the bytes read
// there (not replaced or appended since).
func (a *Array) asRead(i int) (int, bool) {
	e := a.elems[i]
	if i >= len(a.offsets) || a.offsets[i] < 0 || len(e) == 0 {
		return 0, false
	}
	p := a.offsets[i] - a.rawOff
	if p < 0 || p+len(e) > len(a.raw) || &a.raw[p] != &e[0] {
		return 0, false
	}
	return p, true
}

// Elems returns the records, splitting the array if it is still whole.
func (a *Array) Elems() [][]byte {
	_ = a.splitNow("")
	return a.elems
}

// Len is the number of records.
func (a *Array) Len() int {
	if !a.split {
		return a.known.Count + len(a.pending)
	}
	return len(a.elems)
}

// Last returns the last record (nil when there is none) without splitting
// an array whose facts are known.
func (a *Array) Last() []byte {
	switch {
	case !a.split && len(a.pending) > 0:
		return a.pending[len(a.pending)-1]
	case !a.split && a.known.Count > 0:
		s, e := a.known.Last[0]-a.rawOff, a.known.Last[1]-a.rawOff
		if s > 0 && e <= len(a.raw) && s < e {
			return a.raw[s:e]
		}
	}
	elems := a.Elems()
	if len(elems) == 0 {
		return nil
	}
	return elems[len(elems)-1]
}

// FromEnd calls fn with the records from the last one backwards until fn
// returns false. An array whose facts are known is not split: in baton's
// layout each record begins a line of its own ("\n    {"; a raw newline is
// never inside a string), so the record before one is found by looking
// back for that line, and taken only when it is one whole JSON value ending
// where the next record's separator begins. Anything else splits the array.
func (a *Array) FromEnd(fn func(raw []byte) bool) {
	n := 0 // records given so far
	if !a.split && a.known.Count > 0 {
		for i := len(a.pending) - 1; i >= 0; i-- {
			if n++; !fn(a.pending[i]) {
				return
			}
		}
		s, e := a.known.Last[0]-a.rawOff, a.known.Last[1]-a.rawOff
		for n-len(a.pending) < a.known.Count && s > 0 && e <= len(a.raw) && s < e {
			rec := a.raw[s:e]
			if !gjson.ValidBytes(rec) || rec[0] != '{' {
				break
			}
			if n++; !fn(rec) {
				return
			}
			if n-len(a.pending) == a.known.Count {
				return
			}
			e = s - len(",\n    ")
			if e < 0 || string(a.raw[e:s]) != ",\n    " {
				break
			}
			s = bytes.LastIndex(a.raw[:e], []byte("\n    {")) + len("\n    ")
		}
	}
	elems := a.Elems()
	for i := len(elems) - 1 - n; i >= 0; i-- {
		if !fn(elems[i]) {
			return
		}
	}
}

// Known returns the facts the array was read with (zero when unknown).
func (a *Array) Known() ArrayFacts { return a.known }

// Append adds a record encoded from v and returns its raw form.
func (a *Array) Append(v any) ([]byte, error) {
	raw, err := Indent(v, RecordDepth)
	if err != nil {
		return nil, err
	}
	a.AppendRaw(raw)
	return raw, nil
}

// AppendRaw adds an already-encoded record (at record depth).
func (a *Array) AppendRaw(raw []byte) {
	if !a.split {
		a.pending = append(a.pending, raw)
		return
	}
	a.elems = append(a.elems, raw)
	a.offsets = append(a.offsets, -1)
}

// Record parses element i as an object at record depth.
func (a *Array) Record(i int) (*Object, error) {
	return ParseObject(a.Elems()[i], RecordDepth)
}

// Replace stores o as element i.
func (a *Array) Replace(i int, o *Object) { a.Elems()[i] = o.Bytes() }

// Invalid builds an *InvalidError for element i of the array name.
func (a *Array) Invalid(name string, i int, field, format string, args ...any) *InvalidError {
	path := fmt.Sprintf("%s[%d]", name, i)
	if field != "" {
		path += "." + field
	}
	off := 0
	if i < len(a.offsets) && a.offsets[i] > 0 {
		off = a.offsets[i]
	}
	return &InvalidError{Offset: off, Path: path, Msg: fmt.Sprintf(format, args...)}
}
