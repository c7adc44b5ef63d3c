package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// refuseWhole builds the answer to a controller request that gives every
// item it names the same error, for when no controller answered.
func refuseWhole(req kmsg.Request, code *kerr.Error, message string) kmsg.Response {
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		answer := resp.(*kmsg.CreateTopicsResponse)
		for _, t := range r.Topics {
			at := kmsg.NewCreateTopicsResponseTopic()
			at.Topic, at.ErrorCode, at.ErrorMessage = t.Topic, code.Code, &message
			answer.Topics = append(answer.Topics, at)
		}
	case *kmsg.DeleteTopicsRequest:
		answer := resp.(*kmsg.DeleteTopicsResponse)
		for _, name := range r.TopicNames {
			at := kmsg.NewDeleteTopicsResponseTopic()
			topic := name
			at.Topic, at.ErrorCode, at.ErrorMessage = &topic, code.Code, &message
			answer.Topics = append(answer.Topics, at)
		}
		for _, t := range r.Topics {
			at := kmsg.NewDeleteTopicsResponseTopic()
			at.Topic, at.TopicID, at.ErrorCode, at.ErrorMessage = t.Topic, t.TopicID, code.Code, &message
			answer.Topics = append(answer.Topics, at)
		}
	case *kmsg.CreatePartitionsRequest:
		answer := resp.(*kmsg.CreatePartitionsResponse)
		for _, t := range r.Topics {
			at := kmsg.NewCreatePartitionsResponseTopic()
			at.Topic, at.ErrorCode, at.ErrorMessage = t.Topic, code.Code, &message
			answer.Topics = append(answer.Topics, at)
		}
	case *kmsg.AlterConfigsRequest:
		answer := resp.(*kmsg.AlterConfigsResponse)
		for _, res := range r.Resources {
			ar := kmsg.NewAlterConfigsResponseResource()
			ar.ResourceType, ar.ResourceName, ar.ErrorCode, ar.ErrorMessage = res.ResourceType, res.ResourceName, code.Code, &message
			answer.Resources = append(answer.Resources, ar)
		}
	case *kmsg.IncrementalAlterConfigsRequest:
		answer := resp.(*kmsg.IncrementalAlterConfigsResponse)
		for _, res := range r.Resources {
			ar := kmsg.NewIncrementalAlterConfigsResponseResource()
			ar.ResourceType, ar.ResourceName, ar.ErrorCode, ar.ErrorMessage = res.ResourceType, res.ResourceName, code.Code, &message
			answer.Resources = append(answer.Resources, ar)
		}
	case *kmsg.ElectLeadersRequest:
		answer := resp.(*kmsg.ElectLeadersResponse)
		answer.ErrorCode = code.Code // v1+; v0 has only the partitions'
		for _, t := range r.Topics {
			at := kmsg.NewElectLeadersResponseTopic()
			at.Topic = t.Topic
			for _, partition := range t.Partitions {
				ap := kmsg.NewElectLeadersResponseTopicPartition()
				ap.Partition, ap.ErrorCode, ap.ErrorMessage = partition, code.Code, &message
				at.Partitions = append(at.Partitions, ap)
			}
			answer.Topics = append(answer.Topics, at)
		}
	case *kmsg.AlterPartitionAssignmentsRequest:
		answer := resp.(*kmsg.AlterPartitionAssignmentsResponse)
		answer.ErrorCode, answer.ErrorMessage = code.Code, &message
	case *kmsg.ListPartitionReassignmentsRequest:
		answer := resp.(*kmsg.ListPartitionReassignmentsResponse)
		answer.ErrorCode, answer.ErrorMessage = code.Code, &message
	case *kmsg.AllocateProducerIDsRequest:
		resp.(*kmsg.AllocateProducerIDsResponse).ErrorCode = code.Code
	case *kmsg.BrokerRegistrationRequest:
		answer := resp.(*kmsg.BrokerRegistrationResponse)
		answer.ErrorCode, answer.BrokerEpoch = code.Code, -1
	case *kmsg.BrokerHeartbeatRequest:
		answer := resp.(*kmsg.BrokerHeartbeatResponse)
		answer.ErrorCode, answer.IsFenced = code.Code, true
	case *kmsg.AlterPartitionRequest:
		resp.(*kmsg.AlterPartitionResponse).ErrorCode = code.Code
	case *kmsg.DescribeQuorumRequest:
		answer := resp.(*kmsg.DescribeQuorumResponse)
		answer.ErrorCode, answer.ErrorMessage = code.Code, &message
	default:
		panic("broker: no whole refusal for " + kmsg.NameForKey(req.Key()))
	}
	return resp
}

// firstErrorCode is the error of an answer's first item (or of the whole
// answer): a controller that is not the active one refuses every item
// alike, so the first tells whether it did.
func firstErrorCode(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.CreateTopicsResponse:
		if len(r.Topics) > 0 {
			return r.Topics[0].ErrorCode
		}
	case *kmsg.DeleteTopicsResponse:
		if len(r.Topics) > 0 {
			return r.Topics[0].ErrorCode
		}
	case *kmsg.CreatePartitionsResponse:
		if len(r.Topics) > 0 {
			return r.Topics[0].ErrorCode
		}
	case *kmsg.AlterConfigsResponse:
		if len(r.Resources) > 0 {
			return r.Resources[0].ErrorCode
		}
	case *kmsg.IncrementalAlterConfigsResponse:
		if len(r.Resources) > 0 {
			return r.Resources[0].ErrorCode
		}
	case *kmsg.ElectLeadersResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.AlterPartitionAssignmentsResponse:
		if r.ErrorCode != 0 || len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	case *kmsg.ListPartitionReassignmentsResponse:
		return r.ErrorCode
	case *kmsg.AllocateProducerIDsResponse:
		return r.ErrorCode
	case *kmsg.BrokerRegistrationResponse:
		return r.ErrorCode
	case *kmsg.BrokerHeartbeatResponse:
		return r.ErrorCode
	case *kmsg.AlterPartitionResponse:
		return r.ErrorCode
	case *kmsg.DescribeQuorumResponse:
		return r.ErrorCode
	}
	return 0
}
