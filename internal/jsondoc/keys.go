package jsondoc

import "bytes"

// SplitKeys splits a JSON array of objects that is known to be valid (a
// file baton wrote or validated in full) into its records, as SplitArray
// does, and reads in the same pass the raw value of each of keys at each
// record's top level: vals[i*len(keys)+k] is record i's value of keys[k]
// (the first of a key given twice, as a walk of the record meets them; nil
// when absent). It reads strings by their closing quote instead of byte by
// byte, and decodes nothing. ok is false when a record is not an object or
// a key of a record's top level holds an escape (it could spell one of
// keys): the caller then reads the array the general way.
// n is how many records to expect (a capacity; 0 when unknown).
func SplitKeys(raw []byte, keys []string, n int) (elems [][]byte, offsets []int, vals [][]byte, ok bool) {
	elems, offsets, vals = make([][]byte, 0, n), make([]int, 0, n), make([][]byte, 0, n*len(keys))
	p := skipBlank(raw, 0)
	if p >= len(raw) || raw[p] != '[' {
		return nil, nil, nil, false
	}
	p = skipBlank(raw, p+1)
	if p < len(raw) && raw[p] == ']' {
		return nil, nil, nil, true
	}
	for p < len(raw) {
		if raw[p] != '{' {
			return nil, nil, nil, false
		}
		start := p
		vals = append(vals, make([][]byte, len(keys))...)
		if p, ok = recordKeys(raw, p, keys, vals[len(vals)-len(keys):]); !ok {
			return nil, nil, nil, false
		}
		elems = append(elems, raw[start:p:p])
		offsets = append(offsets, start)
		p = skipBlank(raw, p)
		if p >= len(raw) {
			break
		}
		switch raw[p] {
		case ',':
			p = skipBlank(raw, p+1)
		case ']':
			return elems, offsets, vals, true
		default:
			return nil, nil, nil, false
		}
	}
	return nil, nil, nil, false
}

// recordKeys reads the object at p (its '{') into vals and returns the
// offset after it.
func recordKeys(raw []byte, p int, keys []string, vals [][]byte) (int, bool) {
	p = skipBlank(raw, p+1)
	if p < len(raw) && raw[p] == '}' {
		return p + 1, true
	}
	for p < len(raw) && raw[p] == '"' {
		end := stringEnd(raw, p)
		if end < 0 {
			return 0, false
		}
		key := raw[p+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return 0, false
		}
		p = skipBlank(raw, end)
		if p >= len(raw) || raw[p] != ':' {
			return 0, false
		}
		p = skipBlank(raw, p+1)
		vend := valueEnd(raw, p)
		if vend < 0 {
			return 0, false
		}
		for k, want := range keys {
			if vals[k] == nil && string(key) == want {
				vals[k] = raw[p:vend:vend]
			}
		}
		p = skipBlank(raw, vend)
		if p >= len(raw) {
			return 0, false
		}
		switch raw[p] {
		case ',':
			p = skipBlank(raw, p+1)
		case '}':
			return p + 1, true
		default:
			return 0, false
		}
	}
	return 0, false
}

func skipBlank(raw []byte, p int) int {
	for p < len(raw) {
		switch raw[p] {
		case ' ', '\n', '\t', '\r':
			p++
		default:
			return p
		}
	}
	return p
}

// stringEnd returns the offset after the string starting at p (its opening
// quote), found by its closing quote: one not escaped by an odd run of
// backslashes. -1 when it does not end.
func stringEnd(raw []byte, p int) int {
	for i := p + 1; ; {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		n := 0
		for j := q - 1; j > p && raw[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// valueEnd returns the offset after the value starting at p (-1 when it
// does not end).
func valueEnd(raw []byte, p int) int {
	if p >= len(raw) {
		return -1
	}
	switch raw[p] {
	case '"':
		return stringEnd(raw, p)
	case '{', '[':
		depth := 0
		for i := p; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				e := stringEnd(raw, i)
				if e < 0 {
					return -1
				}
				i = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	i := p
	for i < len(raw) {
		switch raw[i] {
		case ',', '}', ']', ' ', '\n', '\t', '\r':
			if i == p {
				return -1
			}
			return i
		}
		i++
	}
	return -1
}

// SplitKeys splits an array not yet split (as Elems would) and returns
// its records' values of keys (see SplitKeys); false, leaving the array
// as it is, when the array was split or appended to already, or when
// SplitKeys cannot read it.
func (a *Array) SplitKeys(keys []string) ([][]byte, bool) {
	if a.split || len(a.pending) > 0 {
		return nil, false
	}
	elems, offs, vals, ok := SplitKeys(a.raw, keys, a.known.Count)
	if !ok {
		return nil, false
	}
	for j := range offs {
		offs[j] += a.rawOff
	}
	a.elems, a.offsets, a.split = elems, offs, true
	return vals, true
}
