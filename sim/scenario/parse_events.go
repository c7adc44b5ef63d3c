package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// An event line's words after "at T" (parse.go reads the rest of a file):
// the kind, its target (a node, a partition's leader, the controller, the
// coordinator, any), a partition's two sides, and its kind's settings.

// ParseEvent reads an event as FormatEvent writes it (without "at T").
func ParseEvent(words []string) (Event, error) {
	if len(words) == 0 {
		return Event{}, fmt.Errorf("no event")
	}
	e := Event{Kind: Kind(words[0])}
	info, ok := infoOf(e.Kind)
	if !ok {
		return Event{}, fmt.Errorf("unknown fault %q (have %v)", words[0], Kinds())
	}
	words = words[1:]
	var err error
	switch info.target {
	case targetNode:
		e.Target, words, err = parseTarget(words)
	case targetSides:
		e.Sides, words, err = parseSides(words)
	case targetClient:
		if len(words) == 0 {
			return Event{}, fmt.Errorf("%s needs a client", e.Kind)
		}
		e.Client, words = words[0], words[1:]
	}
	if err != nil {
		return Event{}, err
	}
	for len(words) > 0 {
		if len(words) < 2 {
			return Event{}, fmt.Errorf("%s needs a value", words[0])
		}
		key, value := words[0], words[1]
		words = words[2:]
		switch {
		case key == "for":
			e.For, err = time.ParseDuration(value)
		case key == "stagger" && e.Kind == KindPowerLoss:
			e.Stagger, err = time.ParseDuration(value)
		case key == "by" && e.Kind == KindClockJump:
			e.By, err = time.ParseDuration(value)
		case key == "rate" && e.Kind == KindClockDrift:
			e.Rate, err = strconv.ParseFloat(value, 64)
		case key == "sync" && e.Kind == KindSlowDisk:
			err = parseRange(value, &e.SyncMin, &e.SyncMax)
		case key == "latency" && e.Kind == KindSlowNet:
			err = parseRange(value, &e.LatencyMin, &e.LatencyMax)
		default:
			return Event{}, fmt.Errorf("%s takes no %q", e.Kind, key)
		}
		if err != nil {
			return Event{}, fmt.Errorf("%s %q: %v", key, value, err)
		}
	}
	return e, nil
}

// parseTarget reads "n2", "leader orders-0", "controller", "coordinator"
// or "any".
func parseTarget(words []string) (Target, []string, error) {
	if len(words) == 0 {
		return Target{}, nil, fmt.Errorf("no target node")
	}
	switch words[0] {
	case "controller":
		return Target{Role: RoleController}, words[1:], nil
	case "any":
		return Target{Role: RoleAny}, words[1:], nil
	case "coordinator":
		return Target{Role: RoleCoordinator}, words[1:], nil
	case "leader":
		if len(words) < 2 {
			return Target{}, nil, fmt.Errorf("leader of which partition?")
		}
		cut := strings.LastIndexByte(words[1], '-')
		partition, err := strconv.ParseInt(words[1][cut+1:], 10, 32)
		if cut <= 0 || err != nil {
			return Target{}, nil, fmt.Errorf("partition %q; want TOPIC-N", words[1])
		}
		return LeaderTarget(words[1][:cut], int32(partition)), words[2:], nil
	}
	id, err := parseNode(words[0])
	if err != nil {
		return Target{}, nil, err
	}
	return NodeTarget(id), words[1:], nil
}

// parseSides reads "n1 n2 | n3" up to the next keyword.
func parseSides(words []string) ([2][]int, []string, error) {
	var sides [2][]int
	side := 0
	for len(words) > 0 && words[0] != "for" {
		if words[0] == "|" {
			if side == 1 {
				return sides, nil, fmt.Errorf("a partition has two sides")
			}
			side, words = 1, words[1:]
			continue
		}
		id, err := parseNode(words[0])
		if err != nil {
			return sides, nil, err
		}
		sides[side] = append(sides[side], id)
		words = words[1:]
	}
	if side != 1 {
		return sides, nil, fmt.Errorf("want the two sides of the partition, as n1 n2 | n3")
	}
	return sides, words, nil
}

func parseNode(word string) (int, error) {
	id, err := strconv.Atoi(strings.TrimPrefix(word, "n"))
	if !strings.HasPrefix(word, "n") || err != nil || id < 1 {
		return 0, fmt.Errorf("node %q; want n1, n2, ..., leader TOPIC-N, controller, coordinator or any", word)
	}
	return id, nil
}
