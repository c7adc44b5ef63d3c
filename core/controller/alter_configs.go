package controller

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// AlterConfigs answers the legacy AlterConfigs (versions 0-2): each topic's
// explicit configs become exactly the ones given; any not given go back to
// their defaults. Besides the rules of planConfigAlterations, an unknown
// config or invalid value is INVALID_CONFIG and a null value
// INVALID_REQUEST. Only what changes is written: a ConfigRecord per new or
// changed value, one with a nil value per config removed.
func (c *Controller) AlterConfigs(req *kmsg.AlterConfigsRequest, done func(*kmsg.AlterConfigsResponse)) {
	resources := make([]*configAlteration, len(req.Resources))
	for i, r := range req.Resources {
		resources[i] = &configAlteration{resourceType: r.ResourceType, resourceName: r.ResourceName}
		for _, config := range r.Configs {
			resources[i].configNames = append(resources[i].configNames, config.Name)
		}
	}
	answer := func(commit *failure) {
		resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
		for _, r := range resources {
			f := r.outcome(commit)
			answer := kmsg.NewAlterConfigsResponseResource()
			answer.ResourceType, answer.ResourceName = r.resourceType, r.resourceName
			answer.ErrorCode, answer.ErrorMessage = f.errorCode(), f.messagePointer()
			resp.Resources = append(resp.Resources, answer)
		}
		done(resp)
	}
	c.submitAdmin(func() ([]metadata.Record, func(*failure)) {
		records := c.planConfigAlterations(resources, req.ValidateOnly, func(i int, _ map[string]string) (map[string]string, *failure) {
			replacement := map[string]string{}
			for _, config := range req.Resources[i].Configs {
				value, f := normalizedTopicConfigValue(config.Name, config.Value)
				if f != nil {
					return nil, f
				}
				replacement[config.Name] = value
			}
			return replacement, nil
		})
		return records, answer
	}, func(f *failure) {
		for _, r := range resources {
			r.failure = f
		}
		answer(nil)
	})
}
