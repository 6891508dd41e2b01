package frontier

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// saveFormat names the files Save writes; saveVersion is their version.
const (
	saveFormat  = "crawlkit-frontier"
	saveVersion = 1
)

type savedFile struct {
	Format  string     `json:"format"`
	Version int        `json:"version"`
	URLs    []savedURL `json:"urls"`
	// Count repeats len(URLs), so that a file cut at a URL's end is told
	// from a whole one.
	Count int `json:"count"`
}

type savedURL struct {
	URL      string    `json:"url"`
	State    string    `json:"state"`
	Priority int       `json:"priority,omitempty"`
	Attempts int       `json:"attempts,omitempty"`
	At       time.Time `json:"at,omitzero"`
	Status   int       `json:"status,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Save writes f's URLs, their states, attempts and times, to w, in the
// order they were added, so that Load resumes the crawl where it stopped.
// A URL in flight is saved as queued, its attempt not counted: its
// outcome is not known.
func (f *Frontier) Save(w io.Writer) error {
	f.mu.Lock()
	all := make([]*entry, 0, len(f.byKey))
	for _, e := range f.byKey {
		all = append(all, e)
	}
	slices.SortFunc(all, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	file := savedFile{Format: saveFormat, Version: saveVersion, URLs: make([]savedURL, len(all)), Count: len(all)}
	for i, e := range all {
		u := savedURL{URL: e.url, State: e.state.String(), Priority: e.priority, Attempts: e.attempts, Status: e.status}
		switch e.state {
		case InFlight:
			u.State, u.Attempts = Queued.String(), e.attempts-1
		case Waiting:
			u.At = e.at
		}
		if e.err != nil {
			u.Error = e.err.Error()
		}
		file.URLs[i] = u
	}
	f.mu.Unlock()
	return json.NewEncoder(w).Encode(file)
}

// Load restores into f, which must hold no URL, the URLs Save wrote to r.
// A file that is not whole, not Save's or holds a URL f cannot take is an
// error, and f is left empty. A restored URL's error keeps its message
// only (a Refused URL's *robots.DisallowedError is not rebuilt).
func (f *Frontier) Load(r io.Reader) error {
	var file savedFile
	dec := json.NewDecoder(r)
	if err := dec.Decode(&file); err != nil {
		return fmt.Errorf("frontier: load: %w", err)
	}
	// A file saved twice into one stream, or with anything after it, is
	// not Save's: which copy is the crawl's is not known.
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("frontier: load: something follows the saved frontier: it is not Save's alone")
	}
	if file.Format != saveFormat {
		return fmt.Errorf("frontier: load: not a frontier file (format %q, want %q)", file.Format, saveFormat)
	}
	if file.Version != saveVersion {
		return fmt.Errorf("frontier: load: version %d, want %d", file.Version, saveVersion)
	}
	if file.Count != len(file.URLs) {
		return fmt.Errorf("frontier: load: %d URLs, the file says %d: it is not whole", len(file.URLs), file.Count)
	}
	type loaded struct {
		origin string
		e      *entry
	}
	all := make([]loaded, 0, len(file.URLs))
	seen := make(map[string]bool, len(file.URLs))
	var bytes int64
	for i, u := range file.URLs {
		st, ok := stateNamed(u.State)
		if !ok || st == InFlight {
			return fmt.Errorf("frontier: load: URL %d (%s): state %q", i, u.URL, u.State)
		}
		originKey, key, err := f.keyOf(u.URL)
		if err != nil {
			return fmt.Errorf("frontier: load: URL %d: %w", i, err)
		}
		if seen[key] {
			return fmt.Errorf("frontier: load: URL %d (%s) is there twice", i, u.URL)
		}
		seen[key] = true
		bytes += int64(len(u.URL))
		e := &entry{url: u.URL, key: key, priority: u.Priority, seq: uint64(i + 1), attempts: max(u.Attempts, 0), status: u.Status, index: -1}
		if st == Waiting {
			e.at = u.At
		}
		if u.Error != "" {
			e.err = errors.New(u.Error)
		}
		e.state = st
		all = append(all, loaded{originKey, e})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.byKey) > 0 {
		return fmt.Errorf("frontier: load: the frontier holds %d URLs already", len(f.byKey))
	}
	if len(all) > f.opts.MaxURLs || bytes > f.opts.MaxBytes {
		return fmt.Errorf("%w: the file holds %d URLs, %d bytes (MaxURLs %d, MaxBytes %d)", ErrFull, len(all), bytes, f.opts.MaxURLs, f.opts.MaxBytes)
	}
	for _, l := range all {
		f.insert(l.origin, l.e, l.e.state)
	}
	f.seq = uint64(len(all))
	return nil
}

// stateNamed returns the State whose String is name.
func stateNamed(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return 0, false
}
