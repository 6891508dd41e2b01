// Package lines holds the one routine that cuts a robots.txt body back to
// its complete lines, shared by policy.Truncate and the transport's
// fetcher, so that both keep exactly the same rules from a cut file.
package lines

// Complete returns data up to and including its last line end (LF or CR),
// dropping a partial last line so that no rule is read half-written. It
// returns data[:0] when data holds no line end.
func Complete(data []byte) []byte {
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' || data[i] == '\r' {
			return data[:i+1]
		}
	}
	return data[:0]
}
