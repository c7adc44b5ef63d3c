package harness

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A crash closes every connection the client holds, so the far end reads
// EOF, and refuses every dial after it; a connection the client closed
// itself before is no longer tracked.
func TestCrashSwitchCutsEveryConnectionAndRefusesDials(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			accepted <- conn
		}
	}()
	s := newCrashSwitch()
	var far []net.Conn
	for range 3 {
		if _, err := s.dial(t.Context(), "tcp", listener.Addr().String()); err != nil {
			t.Fatal(err)
		}
		far = append(far, <-accepted)
	}
	closedFirst, err := s.dial(t.Context(), "tcp", listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	<-accepted
	if err := closedFirst.Close(); err != nil {
		t.Fatal(err)
	}
	if got := s.openConnections(); got != 3 {
		t.Fatalf("open connections before the crash: %d, want 3", got)
	}
	s.flip()
	if got := s.openConnections(); got != 0 {
		t.Fatalf("open connections after the crash: %d, want 0", got)
	}
	for i, conn := range far {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := conn.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("connection %d after the crash: read %d bytes, %v; want EOF", i, n, err)
		}
	}
	if _, err := s.dial(t.Context(), "tcp", listener.Addr().String()); !errors.Is(err, errClientCrashed) {
		t.Fatalf("dial after the crash: %v, want %v", err, errClientCrashed)
	}
}

// A churned member that crashes says nothing more: the coordinator keeps
// it in the group (no LeaveGroup arrived) until its session runs out, then
// drops it, which is the path a consumer killed by its machine takes. One
// that leaves is gone at once.
func TestACrashedMemberIsExpiredNotLeft(t *testing.T) {
	cluster := startTestCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const topic, group = "crash", "crash-group"
	admin, err := kgo.NewClient(kgo.SeedBrokers(cluster.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	members := func() int {
		t.Helper()
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		return len(described[group].Members)
	}
	waitMembers := func(want int, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for members() != want {
			if time.Since(start) > within {
				t.Fatalf("the group has %d members after %v; want %d", members(), within, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return time.Since(start)
	}
	log := newHistoryLog(time.Now())
	for _, crashes := range []bool{false, true} {
		var extra []kgo.Opt
		crash := newCrashSwitch()
		if crashes {
			extra = append(extra, kgo.Dialer(crash.dial))
		}
		member, err := newGroupMember(cluster, log, group, topic, "m", BalancerRange, "", extra...)
		if err != nil {
			t.Fatal(err)
		}
		memberContext, stopLoop := context.WithCancel(ctx)
		member.start(memberContext, func(err error) { t.Error(err) })
		for member.subscribes.Load() == 0 {
			if ctx.Err() != nil {
				t.Fatal("the member was never assigned")
			}
			time.Sleep(20 * time.Millisecond)
		}
		waitMembers(1, 30*time.Second)
		crashedAt := time.Now()
		if crashes {
			if crash.openConnections() == 0 {
				t.Fatal("the member dialed nothing through its crash switch")
			}
			crash.flip()
		}
		stopLoop()
		member.stop()
		t.Logf("crash %v: the member's loop and client closed in %v", crashes, time.Since(crashedAt))
		if !crashes {
			if got := members(); got != 0 {
				t.Fatalf("a member that left is still in the group (%d members)", got)
			}
			continue
		}
		if got := members(); got != 1 {
			t.Fatalf("a crashed member's group has %d members right after the crash; want 1 (no LeaveGroup may reach the coordinator)", got)
		}
		waitMembers(0, groupSessionTimeout+10*time.Second)
		if took := time.Since(crashedAt); took < groupSessionTimeout*3/4 {
			t.Fatalf("the crashed member was dropped %v after the crash; its session is %v", took, groupSessionTimeout)
		}
	}
}
