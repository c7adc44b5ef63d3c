package harness

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Endpoint is one end of a link: Client (every Kafka client the harness
// runs, and anything else that is not a node) or a node id, 1..N.
type Endpoint int

// Client is the endpoint of every connection that no node opened.
const Client Endpoint = 0

func (e Endpoint) String() string {
	if e == Client {
		return "client"
	}
	return fmt.Sprintf("n%d", int(e))
}

// Link is one direction of traffic between two endpoints: bytes From
// sends To, whichever of them opened the connection. A connection carries
// two links, one each way.
type Link struct {
	From, To Endpoint
}

func (l Link) String() string { return l.From.String() + "→" + l.To.String() }

// Mode is what a link does to the bytes it carries.
type Mode uint8

const (
	// Pass forwards bytes, after the link's delay if it has one.
	Pass Mode = iota
	// Stall holds bytes without losing them: connections stay open and
	// quiet, as under a partition TCP rides out, and what was held is
	// delivered, late, once the link passes again. New connections are
	// accepted and stall too.
	Stall
	// Reset breaks every connection that carries the link and refuses
	// new ones (they are accepted and closed at once), as a partition
	// does once TCP gives up: whatever was in flight is gone.
	Reset
)

var modeNames = [...]string{Pass: "pass", Stall: "stall", Reset: "reset"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ParseMode reads a Mode's name.
func ParseMode(name string) (Mode, error) {
	for mode, modeName := range modeNames {
		if modeName == name {
			return Mode(mode), nil
		}
	}
	return 0, fmt.Errorf("unknown link mode %q: want pass, stall or reset", name)
}

// LinkState is what one link does now.
type LinkState struct {
	Mode Mode
	// Delay holds every chunk of bytes this long before forwarding it
	// (in Pass mode), keeping their order.
	Delay time.Duration
}

// Links is the fault table every proxy consults: the state of each
// directed link, and the bytes each has forwarded. The zero state of a
// link is Pass without delay. Safe for concurrent use.
type Links struct {
	nodes int

	mutex  sync.Mutex
	states map[Link]LinkState
	// changed is closed and replaced on every change, waking the proxies'
	// pumps waiting on a stalled or delayed link.
	changed chan struct{}

	bytes map[Link]*atomic.Uint64 // fixed at construction: every link has one
}

// NewLinks is the table of a cluster of nodes 1..nodes, every link passing.
func NewLinks(nodes int) *Links {
	if nodes < 1 || nodes > clusterNodesMax {
		panic(fmt.Sprintf("harness: %d nodes: between 1 and %d", nodes, clusterNodesMax))
	}
	l := &Links{nodes: nodes, states: map[Link]LinkState{}, changed: make(chan struct{}), bytes: map[Link]*atomic.Uint64{}}
	for from := Endpoint(0); from <= Endpoint(nodes); from++ {
		for to := Endpoint(0); to <= Endpoint(nodes); to++ {
			l.bytes[Link{from, to}] = &atomic.Uint64{}
		}
	}
	return l
}

// State is a link's state now, and a channel closed at the next change of
// any link.
func (l *Links) State(link Link) (LinkState, <-chan struct{}) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	return l.states[link], l.changed
}

// Set changes one link.
func (l *Links) Set(link Link, state LinkState) {
	l.check(link)
	l.mutex.Lock()
	defer l.mutex.Unlock()
	l.setLocked(link, state)
	l.notifyLocked()
}

// Cut sets both directions between a and b to mode.
func (l *Links) Cut(a, b Endpoint, mode Mode) {
	l.check(Link{a, b})
	l.mutex.Lock()
	defer l.mutex.Unlock()
	l.setLocked(Link{a, b}, LinkState{Mode: mode})
	l.setLocked(Link{b, a}, LinkState{Mode: mode})
	l.notifyLocked()
}

// Partition makes the node-to-node network look like sides: every link
// between nodes in different sides is cut, in both directions, and every
// other node-to-node link passes (whatever an earlier partition did to
// it). Links to and from clients are left as they are. A node in no side
// is cut from every node in a side.
func (l *Links) Partition(mode Mode, sides ...[]Endpoint) {
	sideOf := map[Endpoint]int{}
	for i, side := range sides {
		for _, node := range side {
			l.check(Link{node, node})
			if node == Client {
				panic("harness: a partition's sides hold nodes, not the client endpoint")
			}
			sideOf[node] = i + 1
		}
	}
	l.mutex.Lock()
	defer l.mutex.Unlock()
	for a := Endpoint(1); a <= Endpoint(l.nodes); a++ {
		for b := Endpoint(1); b <= Endpoint(l.nodes); b++ {
			state := LinkState{}
			if a != b && sideOf[a] != sideOf[b] {
				state.Mode = mode
			}
			l.setLocked(Link{a, b}, state)
		}
	}
	l.notifyLocked()
}

// HealAll makes every link pass without delay.
func (l *Links) HealAll() {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	clear(l.states)
	l.notifyLocked()
}

// Faulty lists the links not passing freely, sorted, for logs.
func (l *Links) Faulty() string {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	var parts []string
	for link, state := range l.states {
		part := link.String() + " " + state.Mode.String()
		if state.Delay > 0 {
			part += " +" + state.Delay.String()
		}
		parts = append(parts, part)
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Bytes is how many bytes a link has forwarded so far.
func (l *Links) Bytes(link Link) uint64 {
	counter, ok := l.bytes[link]
	if !ok {
		panic(fmt.Sprintf("harness: no link %s in a cluster of %d nodes", link, l.nodes))
	}
	return counter.Load()
}

func (l *Links) count(link Link, n int) { l.bytes[link].Add(uint64(n)) }

// uncount takes back n bytes count added for a write that fell short.
func (l *Links) uncount(link Link, n int) { l.bytes[link].Add(^uint64(n - 1)) }

func (l *Links) setLocked(link Link, state LinkState) {
	if state == (LinkState{}) {
		delete(l.states, link)
		return
	}
	l.states[link] = state
}

func (l *Links) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *Links) check(link Link) {
	if link.From < 0 || link.To < 0 || int(link.From) > l.nodes || int(link.To) > l.nodes {
		panic(fmt.Sprintf("harness: link %s outside a cluster of %d nodes", link, l.nodes))
	}
}
