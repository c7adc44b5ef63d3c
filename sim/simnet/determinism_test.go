package simnet

import (
	"fmt"
	"sluice/core"
	"sluice/sim/kernel"
	"testing"
	"time"
)

// echo answers every frame with the same frame, until it is closed.
type echo struct {
	conn core.Conn
}

func (e *echo) Frame(frame []byte) { e.conn.Send(frame) }
func (e *echo) Closed(error)       {}

type echoAcceptor struct{}

func (echoAcceptor) Accept(c core.Conn) core.Handler { return &echo{conn: c} }

// chatter runs a busy little network for a minute of virtual time: four
// hosts dialing one another and exchanging frames, with cuts, partitions,
// heals, resets and crashes drawn from the seed. It returns the trace hash
// and the stats.
func chatter(seed uint64) (string, Stats) {
	k := kernel.NewKernel(seed, nil)
	n := New(k, kernel.NewRand(seed, "net"), Faults{
		LatencyMin:              time.Millisecond,
		LatencyMax:              30 * time.Millisecond,
		BandwidthBytesPerSecond: 1 << 20,
		StallBreakAfter:         2 * time.Second,
		ConnectTimeout:          time.Second,
	})
	random := kernel.NewRand(seed, "test/chatter")
	hosts := []string{"n1", "n2", "n3", "n4"}
	processes := make([]*kernel.Process, len(hosts))
	endpoints := make([]*Endpoint, len(hosts))
	for i, h := range hosts {
		processes[i] = kernel.NewProcess(h)
		endpoints[i] = n.Endpoint(h, processes[i])
		if err := endpoints[i].Listen(h+":9092", echoAcceptor{}); err != nil {
			panic(err)
		}
	}
	// Each host keeps one client connection it sends on, redialing when
	// it breaks.
	conns := make([]core.Conn, len(hosts))
	var dial func(i int)
	dial = func(i int) {
		target := hosts[random.IntN(len(hosts))]
		conns[i] = endpoints[i].Dial(target+":9092", redial{func() { dial(i) }, k, processes[i]})
	}
	for i := range hosts {
		dial(i)
	}
	var tick func()
	tick = func() {
		i := random.IntN(len(hosts))
		if processes[i].Alive() {
			conns[i].Send([]byte(fmt.Sprintf("%s@%d", hosts[i], k.Now())))
		}
		switch random.IntN(40) {
		case 0:
			n.Cut(hosts[random.IntN(4)], hosts[random.IntN(4)])
		case 1:
			n.Partition(hosts[:2], hosts[2:])
		case 2, 3:
			n.Heal()
		case 4:
			n.ResetRandomConnection()
		case 5:
			h := random.IntN(len(hosts))
			if !processes[h].Alive() {
				break
			}
			processes[h].Crash()
			endpoints[h].Crash()
			k.Schedule(int64(500*time.Millisecond), nil, "test.restart", func() {
				processes[h].Restart()
				if err := endpoints[h].Listen(hosts[h]+":9092", echoAcceptor{}); err != nil {
					panic(err)
				}
				dial(h)
			})
		}
		k.Schedule(int64(5*time.Millisecond), nil, "test.tick", tick)
	}
	k.Schedule(0, nil, "test.tick", tick)
	k.RunUntil(int64(time.Minute))
	return k.Trace().Hash(), n.Stats()
}

// redial is a client handler that dials again, a little later, when its
// connection ends.
type redial struct {
	again func()
	k     *kernel.Kernel
	owner *kernel.Process
}

func (r redial) Frame([]byte) {}
func (r redial) Closed(error) {
	r.k.Schedule(int64(100*time.Millisecond), r.owner, "test.redial", r.again)
}

func TestASeedReplaysToTheSameTrace(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		firstHash, firstStats := chatter(seed)
		secondHash, secondStats := chatter(seed)
		if firstHash != secondHash || firstStats != secondStats {
			t.Errorf("seed %d: two runs differ: %s %+v\nvs %s %+v", seed, firstHash, firstStats, secondHash, secondStats)
		}
		if firstStats.FramesDelivered == 0 || firstStats.Resets == 0 || firstStats.DirectionsStalled == 0 || firstStats.Crashes == 0 {
			t.Errorf("seed %d exercised too little: %+v", seed, firstStats)
		}
	}
	one, _ := chatter(1)
	two, _ := chatter(2)
	if one == two {
		t.Errorf("seeds 1 and 2 gave the same trace hash %s; the seed does not reach the run", one)
	}
}
