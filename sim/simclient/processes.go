package simclient

// Processes hands out history process numbers for one run. Jepsen's rule is
// that a process runs one operation at a time and is never reused after an
// info completion; every producer lane and reader takes its numbers from
// the run's one Processes, so no two ever share one.
type Processes struct{ next int }

// Next returns a process number never handed out before.
func (p *Processes) Next() int {
	n := p.next
	p.next++
	return n
}
