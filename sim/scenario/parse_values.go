package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The values a scenario file's directives carry (parse.go reads the
// directives): key-value pairs, numbers, durations and their ranges, and
// lists of partitions, each refused with the line it came from.

// parsePairs reads "key value key value ..." after the directive's name.
func parsePairs(d directive, setters map[string]func(string) error) error {
	words := d.words[1:]
	if len(words)%2 != 0 {
		return d.errorf("want pairs of a setting and its value")
	}
	for i := 0; i < len(words); i += 2 {
		set, ok := setters[words[i]]
		if !ok {
			return d.errorf("unknown setting %q", words[i])
		}
		if err := set(words[i+1]); err != nil {
			return d.errorf("%s %q: %v", words[i], words[i+1], err)
		}
	}
	return nil
}

func parseIntInto(d directive, target *int) error {
	if err := d.want(2); err != nil {
		return err
	}
	if err := parseInt(d.words[1], target); err != nil {
		return d.errorf("%v", err)
	}
	return nil
}

func parseInt(text string, target *int) error {
	value, err := strconv.Atoi(text)
	if err != nil {
		return err
	}
	*target = value
	return nil
}

func parseDurationInto(d directive, target *time.Duration) error {
	if err := d.want(2); err != nil {
		return err
	}
	if err := durationInto(target)(d.words[1]); err != nil {
		return d.errorf("%v", err)
	}
	return nil
}

func durationInto(target *time.Duration) func(string) error {
	return func(text string) error {
		d, err := time.ParseDuration(text)
		if err != nil {
			return err
		}
		*target = d
		return nil
	}
}

func intInto(target *int) func(string) error {
	return func(text string) error { return parseInt(text, target) }
}

func floatInto(target *float64) func(string) error {
	return func(text string) error {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return err
		}
		*target = f
		return nil
	}
}

// parseRange reads "LOW-HIGH" durations.
func parseRange(text string, low, high *time.Duration) error {
	first, second, ok := strings.Cut(text, "-")
	if !ok {
		return fmt.Errorf("want LOW-HIGH")
	}
	a, err := time.ParseDuration(first)
	if err != nil {
		return err
	}
	b, err := time.ParseDuration(second)
	if err != nil {
		return err
	}
	*low, *high = a, b
	return nil
}

// parsePartitionsMax bounds a partition list's length.
const parsePartitionsMax = partitionsMax

func parsePartitions(text string) ([]int32, error) {
	var partitions []int32
	for _, part := range strings.Split(text, ",") {
		p, err := strconv.ParseInt(part, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("partitions %q: %v", text, err)
		}
		if len(partitions) >= parsePartitionsMax {
			return nil, fmt.Errorf("partitions %q: more than %d", text, parsePartitionsMax)
		}
		partitions = append(partitions, int32(p))
	}
	return partitions, nil
}
