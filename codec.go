package robots

import (
	"bytes"
	"encoding/json"
	"errors"
)

// recordMagic starts every stored record: its last line names the format
// version. A record of another version is treated as missing and left in
// place, since a newer transport sharing the store may have written it.
const recordMagic = "robots-record v2\n"

// encode returns the stored form of r: recordMagic, a JSON header line,
// then the body and the good copy's body, raw, so that a body is held once
// and costs no base64.
func (r record) encode() []byte {
	r.BodyLen = len(r.Body)
	var goodBody []byte
	if r.Good != nil {
		g := *r.Good
		g.BodyLen, goodBody = len(g.Body), g.Body
		r.Good = &g
	}
	head, err := json.Marshal(r)
	if err != nil {
		// A record holds only strings, numbers and times of this
		// package's making; json cannot fail on them.
		panic(err)
	}
	out := make([]byte, 0, len(recordMagic)+len(head)+1+len(r.Body)+len(goodBody))
	out = append(out, recordMagic...)
	out = append(out, head...)
	out = append(out, '\n')
	out = append(out, r.Body...)
	return append(out, goodBody...)
}

// errRecord is why a stored record cannot be read.
var errRecord = errors.New("robots: unreadable record")

// errNewerRecord says that a stored record was written by a newer version.
var errNewerRecord = errors.New("robots: record of a newer version")

// decodeRecord reads a stored record. A record cut short, damaged, or of
// another version is an error: the caller treats it as missing.
func decodeRecord(data []byte) (record, error) {
	var r record
	rest, ok := bytes.CutPrefix(data, []byte(recordMagic))
	if !ok {
		if bytes.HasPrefix(data, []byte("robots-record v")) {
			return r, errNewerRecord
		}
		return r, errRecord
	}
	head, rest, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok || json.Unmarshal(head, &r) != nil {
		return r, errRecord
	}
	goodLen := 0
	if r.Good != nil {
		goodLen = r.Good.BodyLen
	}
	if r.BodyLen < 0 || goodLen < 0 || r.BodyLen > MaxMaxSize || goodLen > MaxMaxSize || len(rest) != r.BodyLen+goodLen {
		return r, errRecord
	}
	r.Body = rest[:r.BodyLen:r.BodyLen]
	if r.Good != nil {
		r.Good.Body = rest[r.BodyLen:]
	}
	if !r.valid() {
		return r, errRecord
	}
	return r, nil
}

// valid reports whether a decoded record is one this version could have
// written.
func (r *record) valid() bool {
	if r.Outcome < Parsed || r.Outcome > Unreachable || r.FetchedAt.IsZero() {
		return false
	}
	if r.Outcome != Parsed && len(r.Body) > 0 {
		return false
	}
	if g := r.Good; g != nil {
		if r.Outcome != Unreachable || g.Outcome == Unreachable || g.Good != nil || g.Outcome != Parsed && len(g.Body) > 0 {
			return false
		}
	}
	return true
}
