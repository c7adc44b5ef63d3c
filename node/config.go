package node

import (
	"bufio"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sluice/core/broker"
	"sluice/core/metadata"
	sluicenet "sluice/net"
)

// Config is everything a node needs to start.
type Config struct {
	// Listen is the client listener's address (Kafka's listeners).
	Listen string
	// ControllerListen is the controller listener's address, where the
	// other nodes reach this one (the CONTROLLER entry of Kafka's
	// listeners). When empty, a voter listens on its own entry in
	// Controllers; a single node needs none.
	ControllerListen string
	// Advertised is the host:port clients are told to use (Kafka's
	// advertised.listeners); Listen when empty.
	Advertised string
	// DataDir is the data directory (Kafka's log.dirs, one directory).
	DataDir string
	// LogLevel is the slog level: debug, info, warn, error.
	LogLevel slog.Level
	// InboxMax bounds the events waiting for the node's loop.
	InboxMax int

	Broker broker.Config
	Net    sluicenet.Limits

	// retentionRank is the rank (retentionPrecedence) of the setting that
	// last set the default retention.ms, 0 for none.
	retentionRank int
}

// retentionPrecedence ranks the broker settings that set the default
// retention.ms as Kafka reads them: log.retention.ms over
// log.retention.minutes over log.retention.hours, whatever their order
// (server.properties ships log.retention.hours=168, and a
// log.retention.ms above it must still win).
var retentionPrecedence = map[string]int{
	"log.retention.hours":   1,
	"log.retention.minutes": 2,
	"log.retention.ms":      3,
}

// DefaultConfig is a single node on 127.0.0.1:9092 with data in ./data.
func DefaultConfig() Config {
	return Config{
		Listen:   "127.0.0.1:9092",
		DataDir:  "./data",
		LogLevel: slog.LevelInfo,
		InboxMax: 1 << 16,
		Broker:   broker.DefaultConfig(),
		Net:      sluicenet.DefaultLimits(),
	}
}

// LoadProperties applies a Kafka-style properties file (key=value lines,
// # comments) to c. It understands the Kafka broker settings Sluice honours;
// an unknown key is an error, so a typo never silently does nothing.
func (c *Config) LoadProperties(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" || strings.HasPrefix(text, "#") || strings.HasPrefix(text, "!") {
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		if !ok {
			return fmt.Errorf("%s:%d: expected key=value", path, line)
		}
		if err := c.Set(strings.TrimSpace(key), strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	return scanner.Err()
}

// Set applies one Kafka-named setting, and notes it as set, for
// DescribeConfigs to report as the operator's rather than Kafka's default.
func (c *Config) Set(key, value string) error {
	if err := c.set(key, value); err != nil {
		return err
	}
	if c.Broker.StaticSettings == nil {
		c.Broker.StaticSettings = map[string]bool{}
	}
	c.Broker.StaticSettings[key] = true
	return nil
}

func (c *Config) set(key, value string) error {
	if topicConfig, ok := metadata.TopicConfigOfServerDefault(key); ok {
		definition, _ := metadata.LookupTopicConfig(topicConfig)
		value = metadata.NormalizeTopicConfigValue(topicConfig, value)
		if err := definition.Validate(value); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if key == "log.retention.ms" && !c.takesRetentionFrom(key) {
			return nil
		}
		c.setTopicDefault(topicConfig, value)
		return nil
	}
	switch key {
	case "log.retention.hours", "log.retention.minutes":
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not a duration count", key, value)
		}
		unit := time.Hour.Milliseconds()
		if key == "log.retention.minutes" {
			unit = time.Minute.Milliseconds()
		}
		ms := int64(-1) // any negative count is unlimited, as in Kafka
		switch {
		case n > math.MaxInt64/unit:
			return fmt.Errorf("%s: %q is too long a retention", key, value)
		case n >= 0:
			ms = n * unit
		}
		if c.takesRetentionFrom(key) {
			c.setTopicDefault(metadata.ConfigRetentionMs, strconv.FormatInt(ms, 10))
		}
		return nil
	case "node.id", "broker.id":
		return setInteger(&c.Broker.NodeID, key, value, 0, "node id")
	case "listeners":
		return c.setListeners(value)
	case "advertised.listeners":
		c.Advertised = stripListenerName(value)
	case "controller.quorum.voters":
		voters, err := ParseVoters(value)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		c.Broker.Voters = voters
	case "process.roles":
		roles, err := ParseRoles(value)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		c.Broker.Roles = roles
	case "controller.listener.names":
		if value != "CONTROLLER" {
			return fmt.Errorf("%s: Sluice's controller listener is named CONTROLLER, not %q", key, value)
		}
	case "broker.session.timeout.ms":
		return setMilliseconds(&c.Broker.SessionTimeout, key, value)
	case "broker.heartbeat.interval.ms":
		return setMilliseconds(&c.Broker.HeartbeatInterval, key, value)
	case "leader.imbalance.check.interval.seconds":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 1 || n > math.MaxInt64/int64(time.Second) {
			return fmt.Errorf("%s: %q is not a number of seconds", key, value)
		}
		c.Broker.LeaderImbalanceCheckInterval = time.Duration(n) * time.Second
	case "auto.leader.rebalance.enable":
		var enabled bool
		if err := setBool(&enabled, key, value); err != nil {
			return err
		}
		c.Broker.AutoLeaderRebalanceDisabled = !enabled
	case "controller.quorum.election.timeout.ms":
		return setMilliseconds(&c.Broker.ElectionTimeout, key, value)
	case "controller.quorum.fetch.timeout.ms":
		return setMilliseconds(&c.Broker.FetchTimeout, key, value)
	case "controller.quorum.request.timeout.ms":
		return setMilliseconds(&c.Broker.QuorumRequestTimeout, key, value)
	case "log.dirs", "log.dir":
		if strings.Contains(value, ",") {
			return fmt.Errorf("%s: Sluice uses one data directory", key)
		}
		c.DataDir = value
	case "num.partitions":
		return setInteger(&c.Broker.DefaultPartitions, key, value, 1, "partition count")
	case "default.replication.factor":
		return setInteger(&c.Broker.DefaultReplicationFactor, key, value, 1, "replication factor")
	case "auto.create.topics.enable":
		return setBool(&c.Broker.AutoCreateTopics, key, value)
	case "broker.rack":
		c.Broker.Rack = value
	case "log.retention.check.interval.ms":
		return setMilliseconds(&c.Broker.RetentionCheckInterval, key, value)
	case "producer.id.expiration.ms":
		return setMilliseconds(&c.Broker.ProducerIDExpiration, key, value)
	case "socket.request.max.bytes":
		return setInteger(&c.Net.FrameBytesMax, key, value, 1024, "size of at least 1024")
	case "max.connections":
		return setInteger(&c.Net.ConnectionsMax, key, value, 1, "count")
	case "queued.max.request.bytes":
		return setInteger(&c.Net.QueuedBytesMax, key, value, 1, "size")
	case "connections.max.idle.ms":
		return setMilliseconds(&c.Net.IdleTimeout, key, value)
	case "replica.lag.time.max.ms":
		return setMilliseconds(&c.Broker.ReplicaLagTimeMax, key, value)
	case "replica.fetch.wait.max.ms":
		return setMilliseconds(&c.Broker.ReplicaFetchWaitMax, key, value)
	case "group.initial.rebalance.delay.ms":
		return setMilliseconds(&c.Broker.GroupInitialRebalanceDelay, key, value)
	case "group.min.session.timeout.ms":
		return setMilliseconds(&c.Broker.GroupMinSessionTimeout, key, value)
	case "group.max.session.timeout.ms":
		return setMilliseconds(&c.Broker.GroupMaxSessionTimeout, key, value)
	case "group.max.size":
		return setPositiveInt(&c.Broker.GroupMaxSize, key, value)
	case "offsets.topic.num.partitions":
		return setInteger(&c.Broker.OffsetsTopicPartitions, key, value, 1, "partition count")
	case "offsets.topic.replication.factor":
		return setInteger(&c.Broker.OffsetsTopicReplicationFactor, key, value, 1, "replication factor")
	case "offsets.retention.minutes":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: %q is not a number of minutes", key, value)
		}
		c.Broker.OffsetsRetention = time.Duration(n) * time.Minute
	case "offsets.retention.check.interval.ms":
		return setMilliseconds(&c.Broker.OffsetsRetentionCheckInterval, key, value)
	case "offset.metadata.max.bytes":
		return setPositiveInt(&c.Broker.OffsetMetadataMaxBytes, key, value)
	case "offsets.commit.timeout.ms":
		return setMilliseconds(&c.Broker.OffsetCommitTimeout, key, value)
	default:
		return fmt.Errorf("unknown setting %q", key)
	}
	return nil
}

func setPositiveInt(target *int, key, value string) error {
	return setInteger(target, key, value, 1, "positive count")
}

// setInteger reads a whole number of at least least that target's type
// holds; what names the kind of number for the error.
func setInteger[T int | int16 | int32 | int64](target *T, key, value string, least int64, what string) error {
	bits := 64
	switch any(*target).(type) {
	case int16:
		bits = 16
	case int32:
		bits = 32
	case int:
		bits = strconv.IntSize
	}
	n, err := strconv.ParseInt(value, 10, bits)
	if err != nil || n < least {
		return fmt.Errorf("%s: %q is not a %s", key, value, what)
	}
	*target = T(n)
	return nil
}

func setBool(target *bool, key, value string) error {
	b, err := strconv.ParseBool(value)
	if err != nil {
		return fmt.Errorf("%s: %q is not true or false", key, value)
	}
	*target = b
	return nil
}

func setMilliseconds(target *time.Duration, key, value string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%s: %q is not a number of milliseconds", key, value)
	}
	if n > int64(math.MaxInt64/time.Millisecond) {
		// As a Duration it would wrap around to a short, even a
		// negative, time.
		return fmt.Errorf("%s: %q milliseconds is out of range (at most %d)", key, value, int64(math.MaxInt64/time.Millisecond))
	}
	*target = time.Duration(n) * time.Millisecond
	return nil
}

// setListeners reads Kafka's listeners: one address, or a comma-separated
// list of NAME://host:port where CONTROLLER names the controller listener
// and any other name the client listener.
func (c *Config) setListeners(value string) error {
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		name, address, named := strings.Cut(entry, "://")
		switch {
		case !named:
			c.Listen = entry
		case name == "CONTROLLER":
			c.ControllerListen = address
		default:
			c.Listen = address
		}
	}
	return nil
}

// ParseVoters reads controller.quorum.voters (and --controllers):
// "1@host:port,2@host:port,...".
func ParseVoters(value string) (map[int32]string, error) {
	voters := map[int32]string{}
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		idText, address, ok := strings.Cut(entry, "@")
		if !ok {
			return nil, fmt.Errorf("voter %q: expected id@host:port", entry)
		}
		id, err := strconv.ParseInt(idText, 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("voter %q: %q is not a node id", entry, idText)
		}
		if _, _, err := net.SplitHostPort(address); err != nil {
			return nil, fmt.Errorf("voter %q: %w", entry, err)
		}
		if _, repeated := voters[int32(id)]; repeated {
			return nil, fmt.Errorf("voter %d is given twice", id)
		}
		voters[int32(id)] = address
	}
	return voters, nil
}

// ParseRoles reads process.roles (and --process-roles): "broker",
// "controller", or both, comma-separated.
func ParseRoles(value string) (broker.Roles, error) {
	var roles broker.Roles
	for _, role := range strings.Split(value, ",") {
		switch strings.TrimSpace(role) {
		case "broker":
			roles.Broker = true
		case "controller":
			roles.Controller = true
		default:
			return broker.Roles{}, fmt.Errorf("unknown role %q: the roles are broker and controller", role)
		}
	}
	return roles, nil
}

// stripListenerName turns "PLAINTEXT://host:port" into "host:port".
func stripListenerName(value string) string {
	if _, address, ok := strings.Cut(value, "://"); ok {
		return address
	}
	return value
}

// resolve fills derived settings and checks the whole.
func (c *Config) resolve() error {
	roles := c.Broker.Roles
	if !roles.Broker && !roles.Controller {
		roles = broker.Roles{Broker: true, Controller: true}
		c.Broker.Roles = roles
	}
	if roles.Controller && c.ControllerListen == "" && len(c.Broker.Voters) > 1 {
		c.ControllerListen = c.Broker.Voters[c.Broker.NodeID]
	}
	c.Broker.ControllerAddress = c.ControllerListen
	if roles.Controller && len(c.Broker.Voters) > 1 && c.ControllerListen == "" {
		return fmt.Errorf("node %d is a controller but is not among the voters; set --controller-listen", c.Broker.NodeID)
	}
	if roles.Broker {
		if err := c.resolveAdvertised(); err != nil {
			return err
		}
	}
	if c.DataDir == "" {
		return fmt.Errorf("no data directory")
	}
	dir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return fmt.Errorf("data directory %q: %w", c.DataDir, err)
	}
	c.Broker.LogDir = dir
	if c.InboxMax < 1024 {
		return fmt.Errorf("inbox of %d events is too small: disk completions alone may need 1024", c.InboxMax)
	}
	return c.Net.Validate()
}

// resolveAdvertised derives the address a broker gives clients.
func (c *Config) resolveAdvertised() error {
	if c.Advertised == "" {
		c.Advertised = c.Listen
	}
	host, portText, err := net.SplitHostPort(c.Advertised)
	if err != nil {
		return fmt.Errorf("advertised address %q: %w", c.Advertised, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return fmt.Errorf("advertised address %q: bad port", c.Advertised)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		return fmt.Errorf("advertised address %q: clients need a host they can reach; set --advertised", c.Advertised)
	}
	c.Broker.AdvertisedHost = host
	c.Broker.AdvertisedPort = int32(port)
	return nil
}

// takesRetentionFrom reports whether setting key may set the default
// retention.ms, given the settings already applied, and notes it if so.
func (c *Config) takesRetentionFrom(key string) bool {
	rank := retentionPrecedence[key]
	if rank < c.retentionRank {
		return false
	}
	c.retentionRank = rank
	return true
}

// setTopicDefault sets the default of a topic config for topics that do
// not set their own.
func (c *Config) setTopicDefault(name, value string) {
	if c.Broker.TopicDefaults == nil {
		c.Broker.TopicDefaults = map[string]string{}
	}
	c.Broker.TopicDefaults[name] = value
}
