package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"sluice/jepsen/history"
	"sluice/sim"
)

// A group member's row shows what it owned, generation by generation, as
// the history's ok subscribes record it: each bar runs from the
// assignment to the member's next one, or to the info or crash that ended
// its process (a member that loses its membership records nothing, so its
// bar runs on to its next assignment). A group's failure is often a
// partition no one owns, or one two members own; these rows show when.

// groupRows builds a row per group member that recorded a subscribe,
// named "<client> owns", in the order of the clients.
func groupRows(recording *sim.Recording, end time.Duration) []row {
	type owning struct {
		since      time.Duration
		group      string
		generation int32
		assigned   []history.TopicPartition
	}
	open := map[string]owning{}
	byClient := map[string]*row{}
	clientOf := map[int]string{} // process -> client, once it subscribed
	closeBar := func(client string, at time.Duration) {
		o, ok := open[client]
		if !ok {
			return
		}
		delete(open, client)
		text := fmt.Sprintf("g%d %s", o.generation, partitionList(o.assigned))
		byClient[client].spans = append(byClient[client].spans, span{
			from: o.since, to: at, class: "owns g" + strconv.Itoa(int(o.generation%2)), text: text,
			title: fmt.Sprintf("%s owns %s in generation %d of %s, from %s to %s", client, partitionList(o.assigned), o.generation, o.group, seconds(o.since), seconds(at)),
		})
	}
	for _, op := range recording.History {
		at := time.Duration(op.Time)
		switch {
		case op.F == history.FuncSubscribe && op.Type == history.OK && op.Group != "":
			client := clientNamed(recording.Clients, op.MemberID)
			if client == "" {
				continue
			}
			clientOf[op.Process] = client
			if byClient[client] == nil {
				byClient[client] = &row{name: client + " owns"}
			}
			closeBar(client, at)
			open[client] = owning{since: at, group: op.Group, generation: op.Generation, assigned: op.Assigned}
		case op.Type == history.Info:
			if client, ok := clientOf[op.Process]; ok {
				closeBar(client, at)
			}
		}
	}
	var rows []row
	for _, client := range recording.Clients {
		if r := byClient[client]; r != nil {
			closeBar(client, end)
			rows = append(rows, *r)
		}
	}
	return rows
}

// clientNamed is the client a member id belongs to: a static member's
// is its group.instance.id, which the simulator's clients set to their
// name, and a dynamic member's starts with its client id (Kafka's
// "<client.id>-<uuid>"), which is its name too. The longest such name
// wins (g1-c1 is a prefix of g1-c10).
func clientNamed(clients []string, memberID string) string {
	best := ""
	for _, c := range clients {
		if (memberID == c || strings.HasPrefix(memberID, c+"-")) && len(c) > len(best) {
			best = c
		}
	}
	return best
}

// partitionList is a member's partitions in short: "orders-0,1,3", or
// "none".
func partitionList(tps []history.TopicPartition) string {
	if len(tps) == 0 {
		return "none"
	}
	sorted := slices.SortedFunc(slices.Values(tps), history.TopicPartition.Compare)
	var b strings.Builder
	for i, tp := range sorted {
		switch {
		case i == 0 || sorted[i-1].Topic != tp.Topic:
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(tp.String())
		default:
			b.WriteString("," + strconv.Itoa(int(tp.Partition)))
		}
	}
	return b.String()
}
