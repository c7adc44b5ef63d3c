package batch

import "errors"

// ErrTorn reports bytes that end before the batch they start is complete.
var ErrTorn = errors.New("batch: torn (incomplete) batch")

// Scanner walks a buffer holding back-to-back batches, such as a range read
// from a segment file.
//
//	s := batch.Scanner{Buf: buf, VerifyCRC: true}
//	for s.Next() {
//		use(s.Header(), s.Batch())
//	}
//	if s.Err() != nil { ... } // the bytes at s.Position() are bad
type Scanner struct {
	Buf       []byte
	VerifyCRC bool

	position int
	current  []byte
	header   Header
	err      error
}

// Next advances to the next whole batch and reports whether there is one. A
// partial batch at the end of the buffer stops the scan with ErrTorn; a bad
// header or CRC stops it with that error.
func (s *Scanner) Next() bool {
	if s.err != nil {
		return false
	}
	s.position += len(s.current)
	s.current = nil
	rest := s.Buf[s.position:]
	if len(rest) == 0 {
		return false
	}
	if len(rest) < HeaderSize {
		s.err = ErrTorn
		return false
	}
	// Parsed in place, not copied (see ParseInto).
	if err := ParseInto(&s.header, rest); err != nil {
		s.err = err
		return false
	}
	// The size from the field, not Header.Size: a method with a value
	// receiver copies the whole header first, for every batch scanned.
	size := LengthPrefixSize + int(s.header.Length)
	if size > len(rest) {
		s.err = ErrTorn
		return false
	}
	b := rest[:size]
	if s.VerifyCRC && !CheckCRC(b) {
		s.err = ErrCRC
		return false
	}
	s.current = b
	return true
}

// Batch is the current batch's bytes.
func (s *Scanner) Batch() []byte { return s.current }

// Header is the current batch's header (after Next returned true).
func (s *Scanner) Header() Header { return s.header }

// Position is the byte position of the current batch (after Next returned
// true) or of the bad bytes (after it returned false with an error).
func (s *Scanner) Position() int { return s.position }

// Err is why the scan stopped early, or nil if it reached the end cleanly.
func (s *Scanner) Err() error { return s.err }
