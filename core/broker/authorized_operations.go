package broker

// Authorized operations (KIP-430). Metadata, DescribeCluster and
// DescribeGroups can ask which operations the client may perform on a
// topic, the cluster or a group. Sluice has no authorizer (29_describe_acls
// .go), so, as Kafka answers without one (KafkaApis.authorizedOperations),
// the answer is every operation the resource type supports
// (AclEntry.supportedOperations), as a bit field of ACL operation codes.

import "github.com/twmb/franz-go/pkg/kmsg"

// operations is a bit field of the ACL operations given.
func operations(ops ...kmsg.ACLOperation) int32 {
	var field int32
	for _, op := range ops {
		field |= 1 << op
	}
	return field
}

var (
	topicOperations = operations(kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
		kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs)
	clusterOperations = operations(kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite,
		kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe)
	groupOperations = operations(kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete)
)
