package checker

import (
	"fmt"
	"strings"
)

// inconsistentOffsets finds offsets observed holding two or more different
// values. Observations are sorted by offset then value, so each offset's
// values are adjacent and grouped.
func (a *analysis) inconsistentOffsets() []Finding {
	var findings []Finding
	for _, tp := range a.partitions {
		observations := a.logs[tp].observations
		for start := 0; start < len(observations); {
			end := start + 1
			for end < len(observations) && observations[end].offset == observations[start].offset {
				end++
			}
			atOffset := observations[start:end]
			start = end
			if atOffset[0].value == atOffset[len(atOffset)-1].value {
				continue // one value (they are sorted by value): consistent
			}
			var values []string
			var ops, firstOps []int
			for i, seen := range atOffset {
				ops = append(ops, seen.op)
				if i == 0 || seen.value != atOffset[i-1].value {
					firstOps = append(firstOps, seen.op)
					values = append(values, fmt.Sprintf("%q (%s)", seen.value, describeOps(opsOfValue(atOffset, seen.value))))
				}
			}
			findings = append(findings, Finding{
				Anomaly:   InconsistentOffsets,
				Status:    a.status(InconsistentOffsets, tp),
				Partition: tp,
				Ops:       opListPreferring(firstOps, ops),
				Detail: fmt.Sprintf("offset %d holds %d values: %s",
					atOffset[0].offset, len(values), strings.Join(values, ", ")),
			})
		}
	}
	return findings
}

func opsOfValue(observations []observation, value string) []int {
	var ops []int
	for _, seen := range observations {
		if seen.value == value {
			ops = append(ops, seen.op)
		}
	}
	return ops
}
