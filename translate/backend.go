// Package translate maps Slurm concepts onto the engine underneath and
// holds the rules of honest compatibility. The engine is reached only
// through Backend, shaped after Backend.AI's manager API: resource groups
// (Slurm partitions) made of agents (Slurm nodes), and sessions (Slurm
// jobs) that are created, observed through events, and destroyed. The
// embedded engine (translate/local) and the Backend.AI client both
// implement it.
package translate

import "context"

// AgentStatus follows Backend.AI's agent status names.
type AgentStatus string

const (
	AgentAlive      AgentStatus = "ALIVE"
	AgentLost       AgentStatus = "LOST"
	AgentRestarting AgentStatus = "RESTARTING"
	AgentTerminated AgentStatus = "TERMINATED"
)

// Slots is a resource-slot map in Backend.AI's units (cpu in cores,
// mem in bytes, accelerators as device counts).
type Slots struct {
	CPU  float64
	Mem  uint64
	GPUs float64 // cuda.device (or fake devices on the embedded engine)
}

// Agent is one compute host of a resource group.
type Agent struct {
	ID             string
	Addr           string
	ResourceGroup  string
	Status         AgentStatus
	Schedulable    bool
	Arch           string
	Capacity       Slots
	Occupied       Slots
	Sockets        uint16
	CoresPerSocket uint16
	ThreadsPerCore uint16
	Boards         uint16
	BootTime       int64
	OS             string
	Version        string
	GPUType        string
	CPULoad        float64 // load average × 1 (sinfo shows CPU_LOAD ×100 internally)
	FreeMem        uint64  // bytes
}

// ResourceGroup is a Backend.AI scaling group.
type ResourceGroup struct {
	Name     string
	IsActive bool
	AgentIDs []string
}

// Topology is the engine's view of capacity.
type Topology struct {
	Groups []ResourceGroup
	Agents []Agent
}

// Backend is the engine underneath. Methods may block; callers never call
// them from an event loop.
type Backend interface {
	// Name is "local" or "backend.ai".
	Name() string
	// Topology returns resource groups and agents.
	Topology(ctx context.Context) (*Topology, error)
}
