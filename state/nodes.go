package state

import (
	"encoding/json"
	"sort"
)

// NodeAdmin is what an administrator set on a node (scontrol update
// NodeName=... State=...): what slurmctld keeps of a node across restarts
// in its node state file besides the configuration. A node without a
// record is as the engine reports it.
type NodeAdmin struct {
	Name string `json:"name"`
	// Down, Drain, Fail: the node is DOWN (its jobs were ended or
	// requeued), DRAIN or FAIL (no new jobs; running ones go on).
	Down  bool `json:"down,omitempty"`
	Drain bool `json:"drain,omitempty"`
	Fail  bool `json:"fail,omitempty"`
	// Reason, and who gave it when (uid, Unix seconds).
	Reason     string `json:"reason,omitempty"`
	ReasonUID  uint32 `json:"reason_uid"`
	ReasonTime int64  `json:"reason_time,omitempty"`
}

// Unavailable reports whether the node takes no new jobs.
func (n NodeAdmin) Unavailable() bool { return n.Down || n.Drain || n.Fail }

// metaNodes is the meta record that holds every node's NodeAdmin.
const metaNodes = "nodes"

// PutNodeAdmin records the administrators' node states, replacing what
// was recorded (nodes without a record are left out).
func (s *Store) PutNodeAdmin(nodes map[string]NodeAdmin) error {
	list := make([]NodeAdmin, 0, len(nodes))
	for name, n := range nodes {
		n.Name = name
		list = append(list, n)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return s.PutMeta(metaNodes, b)
}

// NodeAdmins reads what PutNodeAdmin recorded (an empty map when
// nothing).
func (s *Store) NodeAdmins() (map[string]NodeAdmin, error) {
	b, err := s.Meta(metaNodes)
	if err != nil || b == nil {
		return map[string]NodeAdmin{}, err
	}
	var list []NodeAdmin
	if err := json.Unmarshal(b, &list); err != nil {
		return map[string]NodeAdmin{}, err
	}
	out := make(map[string]NodeAdmin, len(list))
	for _, n := range list {
		out[n.Name] = n
	}
	return out, nil
}
