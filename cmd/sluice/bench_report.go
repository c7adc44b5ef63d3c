package main

import (
	"fmt"
	"io"
	"strconv"

	"sluice/jepsen/bench"
)

// The human-readable reports of `sluice bench`. Throughput counts value
// bytes only (no keys, headers or protocol overhead), in MB of 10^6 bytes.

func describeLoad(f benchFlags) string {
	rate := "as fast as possible"
	if f.load.Rate > 0 {
		rate = "at " + groupDigits(int64(f.load.Rate)) + " records/s"
	}
	producers := "1 producer"
	if f.producer != 1 {
		producers = strconv.Itoa(f.producer) + " producers"
	}
	return fmt.Sprintf("%s, %d-byte records, acks=%s, compression %s, linger %v, %s",
		producers, f.load.RecordBytes, f.kafka.Acks, f.kafka.Compression, f.kafka.Linger, rate)
}

func printProduceReport(w io.Writer, f benchFlags, r bench.ProduceResult) {
	fmt.Fprintf(w, "sluice bench produce: topic %s on %s\n", f.kafka.Topic, f.brokers)
	fmt.Fprintf(w, "  load         %s\n", describeLoad(f))
	fmt.Fprintf(w, "  window       %v measured after a %v warm-up\n", f.load.Duration, f.load.WarmUp)
	fmt.Fprintf(w, "  throughput   %s records/s   %.1f MB/s   (%s records acknowledged in %.2fs, from the end of the warm-up to the last acknowledgement)\n",
		groupDigits(int64(r.RecordsPerSecond)), r.MegabytesPerSecond, groupDigits(r.Records), r.Seconds)
	fmt.Fprintf(w, "  ack latency  %s\n", r.Latency)
	fmt.Fprintf(w, "               from %s\n", r.LatencyFrom)
	fmt.Fprintf(w, "  records      %s sent, %s acknowledged, %s failed (warm-up included)\n",
		groupDigits(r.Sent), groupDigits(r.Acknowledged), groupDigits(r.Failed))
}

func printConsumeReport(w io.Writer, f benchFlags, r bench.ConsumeResult) {
	fmt.Fprintf(w, "sluice bench consume: topic %s on %s, from earliest\n", f.kafka.Topic, f.brokers)
	fmt.Fprintf(w, "  throughput   %s records/s   %.1f MB/s\n", groupDigits(int64(r.RecordsPerSecond)), r.MegabytesPerSecond)
	complete := ""
	if !r.Complete {
		complete = fmt.Sprintf(", short of the %s wanted", groupDigits(r.Target.Records))
	}
	fmt.Fprintf(w, "  records      %s in %.3fs, from the first record's arrival to the last's%s\n",
		groupDigits(r.Records), r.Seconds, complete)
}

func printEndToEndReport(w io.Writer, f benchFlags, r bench.EndToEndResult) {
	fmt.Fprintf(w, "sluice bench e2e: topic %s on %s, one consumer from the end of the log\n", f.kafka.Topic, f.brokers)
	fmt.Fprintf(w, "  load         %s\n", describeLoad(f))
	fmt.Fprintf(w, "  window       %v measured after a %v warm-up\n", f.load.Duration, f.load.WarmUp)
	fmt.Fprintf(w, "  throughput   %s records/s   %.1f MB/s acknowledged\n",
		groupDigits(int64(r.Produce.RecordsPerSecond)), r.Produce.MegabytesPerSecond)
	fmt.Fprintf(w, "  ack latency  %s\n", r.Produce.Latency)
	fmt.Fprintf(w, "  e2e latency  %s\n", r.Latency)
	fmt.Fprintf(w, "               both from %s\n", r.Produce.LatencyFrom)
	fmt.Fprintf(w, "  records      %s of %s in-window records delivered; %s sent, %s failed (warm-up included)\n",
		groupDigits(r.Delivered), groupDigits(r.Expected), groupDigits(r.Produce.Sent), groupDigits(r.Produce.Failed))
}

// groupDigits prints n with thousands separators: 1,234,567.
func groupDigits(n int64) string {
	digits := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, digits = "-", digits[1:]
	}
	for i := len(digits) - 3; i > 0; i -= 3 {
		digits = digits[:i] + "," + digits[i:]
	}
	return sign + digits
}
