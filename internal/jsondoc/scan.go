package jsondoc

import "encoding/binary"

// scanner is the one pass Check makes over a file: the grammar as
// encoding/json accepts it, the nesting depth, and duplicate keys (see
// strict.go), without building anything. It stops at the first grammar
// error, which Check then has encoding/json describe.
type scanner struct {
	data  []byte
	i     int
	deep  bool  // nests deeper than maxDepth
	dup   error // the first duplicate key
	stack []frame
	spare [][][]byte // key slices of closed objects, reused
	// escaped says whether the last string scanned holds an escape
	escaped bool

	// Validate's shape checks (shape.go); unused by Check's scan
	bad      bool          // a value does not fit its shape (or it cannot be told here)
	next     *Shape        // the shape of the value about to be scanned, when an object
	nextRecs *recordsShape // the records the value about to be scanned holds
	ids      []int64       // the ids of the records of the array being scanned
	facts    Facts         // the arrays of records scanned
}

// scan reports whether data is one well-formed JSON value (ok), whether
// it nests too deep to decode (deep: ok is then false), and its first
// duplicate key.
func scan(data []byte) (ok, deep bool, dup error) {
	s := &scanner{data: data, stack: make([]frame, 0, 16)}
	ok = s.value() && s.ws() == len(data)
	return ok && !s.deep, s.deep, s.dup
}

// ws skips whitespace and returns the position after it.
func (s *scanner) ws() int {
	d, i := s.data, s.i
	for i < len(d) && d[i] <= ' ' && (d[i] == ' ' || d[i] == '\n' || d[i] == '\t' || d[i] == '\r') {
		i++
	}
	s.i = i
	return i
}

func (s *scanner) value() bool {
	if s.ws() >= len(s.data) {
		return false
	}
	sh, rs := s.next, s.nextRecs
	s.next, s.nextRecs = nil, nil
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object(sh)
	case c == '[':
		return s.array(rs)
	case c == '"':
		return s.str()
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.word("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

func (s *scanner) word(w string) bool {
	if len(s.data)-s.i < len(w) || string(s.data[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// push opens an object or array; false when it nests too deep.
func (s *scanner) push(f frame) bool {
	if len(s.stack) >= maxDepth {
		s.deep = true
		return false
	}
	s.stack = append(s.stack, f)
	s.i++
	return true
}

func (s *scanner) pop() {
	if top := s.stack[len(s.stack)-1]; top.object && top.keyIndex == nil {
		s.spare = append(s.spare, top.keys)
	}
	s.stack = s.stack[:len(s.stack)-1]
	s.i++
}

func (s *scanner) object(sh *Shape) bool {
	var keys [][]byte
	if n := len(s.spare); n > 0 {
		keys, s.spare = s.spare[n-1][:0], s.spare[:n-1]
	}
	if !s.push(frame{object: true, keys: keys, shape: sh}) {
		return false
	}
	if s.ws() < len(s.data) && s.data[s.i] == '}' {
		s.closeObject()
		return true
	}
	for {
		if s.ws() >= len(s.data) || s.data[s.i] != '"' {
			return false
		}
		start := s.i + 1
		if !s.str() {
			return false
		}
		key, esc := s.data[start:s.i-1], s.escaped
		f := &s.stack[len(s.stack)-1]
		f.key = key
		j := -1
		if f.shape != nil {
			j = s.member(f, key, esc) // a member the shape names is told apart by its bit
		}
		if j < 0 && s.dup == nil && f.seen(key, esc) {
			s.dup = &InvalidError{Offset: start - 1, Path: pathOf(s.stack, keyText(key)), Msg: "duplicate key: the key appears twice in the same object, so readers disagree about its value; remove one of them"}
		}
		if s.ws() >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		vs := s.ws()
		if !s.value() {
			return false
		}
		if j >= 0 {
			s.fits(j, vs)
		}
		if s.ws() >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.closeObject()
			return true
		default:
			return false
		}
	}
}

func (s *scanner) array(rs *recordsShape) bool {
	if rs != nil {
		s.ids = s.ids[:0]
	}
	if !s.push(frame{recs: rs, start: s.i}) {
		return false
	}
	if s.ws() < len(s.data) && s.data[s.i] == ']' {
		s.closeArray(0)
		return true
	}
	for {
		vs := s.ws()
		if rs != nil {
			s.record(rs, vs)
		}
		if !s.value() {
			return false
		}
		f := &s.stack[len(s.stack)-1]
		f.last = [2]int{vs, s.i}
		if s.ws() >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			f.index++
			s.i++
		case ']':
			s.closeArray(f.index + 1)
			return true
		default:
			return false
		}
	}
}

// str reads the string at s.i (its opening quote) and leaves s.i after
// its closing quote.
func (s *scanner) str() bool {
	d := s.data
	s.escaped = false
	for i := plainRun(d, s.i+1); i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			s.escaped = true
			if i++; i >= len(d) {
				return false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) || !isHex(d[i+1]) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) {
					return false
				}
				i += 4
			default:
				return false
			}
		case c < 0x20:
			return false
		}
	}
	return false
}

// plainRun returns the first position from i, in steps of eight bytes,
// where a word of d may hold a byte a string cannot pass over plainly: a
// quote, a backslash or a control character. Text is scanned a word at
// a time; str then reads the rest byte by byte.
func plainRun(d []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(d); i += 8 {
		v := binary.LittleEndian.Uint64(d[i:])
		q, b := v^(ones*'"'), v^(ones*'\\')
		if ((q-ones)&^q|(b-ones)&^b|(v-ones*0x20)&^v)&highs != 0 {
			break
		}
	}
	return i
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *scanner) number() bool {
	d, i := s.data, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i++; i < len(d) && isDigit(d[i]); i++ {
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		if i++; i >= len(d) || !isDigit(d[i]) {
			return false
		}
		for ; i < len(d) && isDigit(d[i]); i++ {
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return false
		}
		for ; i < len(d) && isDigit(d[i]); i++ {
		}
	}
	s.i = i
	return true
}
