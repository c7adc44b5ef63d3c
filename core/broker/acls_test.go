package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// With no authorizer, the ACL APIs are served and refuse every request
// with SECURITY_DISABLED, one result per creation or filter, as Kafka
// without authorizer.class.name does; they are advertised from v1.
func TestACLAPIsSaySecurityIsDisabled(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()

	versions := c.request(kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	advertised := map[int16][2]int16{}
	for _, k := range versions.ApiKeys {
		advertised[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	for _, key := range []int16{29, 30, 31} {
		if advertised[key] != [2]int16{1, 3} {
			t.Errorf("%s advertised as %v, want versions 1-3", kmsg.NameForKey(key), advertised[key])
		}
	}

	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.Version = 3
	describe.ResourceType = kmsg.ACLResourceTypeAny
	describe.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	describe.Operation = kmsg.ACLOperationAny
	describe.PermissionType = kmsg.ACLPermissionTypeAny
	described := c.request(describe).(*kmsg.DescribeACLsResponse)
	requireError(t, "describe", described.ErrorCode, described.ErrorMessage, kerr.SecurityDisabled)
	if described.ErrorMessage == nil || *described.ErrorMessage != "No Authorizer is configured." || len(described.Resources) != 0 {
		t.Fatalf("describe answered %+v", described)
	}

	create := kmsg.NewPtrCreateACLsRequest()
	create.Version = 3
	for _, topic := range []string{"a", "b"} {
		creation := kmsg.NewCreateACLsRequestCreation()
		creation.ResourceType, creation.ResourceName = kmsg.ACLResourceTypeTopic, topic
		creation.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
		creation.Principal, creation.Host = "User:alice", "*"
		creation.Operation, creation.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		create.Creations = append(create.Creations, creation)
	}
	created := c.request(create).(*kmsg.CreateACLsResponse)
	if len(created.Results) != 2 {
		t.Fatalf("create answered %d results for 2 creations", len(created.Results))
	}
	for _, r := range created.Results {
		requireError(t, "create", r.ErrorCode, r.ErrorMessage, kerr.SecurityDisabled)
	}

	remove := kmsg.NewPtrDeleteACLsRequest()
	remove.Version = 3
	filter := kmsg.NewDeleteACLsRequestFilter()
	filter.ResourceType, filter.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	filter.Operation, filter.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	remove.Filters = append(remove.Filters, filter)
	removed := c.request(remove).(*kmsg.DeleteACLsResponse)
	if len(removed.Results) != 1 {
		t.Fatalf("delete answered %d results for 1 filter", len(removed.Results))
	}
	requireError(t, "delete", removed.Results[0].ErrorCode, removed.Results[0].ErrorMessage, kerr.SecurityDisabled)
}
