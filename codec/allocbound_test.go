package codec

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/lablup/slurm-frontend/codec/fuzzcheck"
)

// Hostile lengths must never make a decoder allocate more than a bound
// (fuzzcheck.Factor bytes per body byte, plus fuzzcheck.Slack): every
// count and length in a body is checked against the bytes left
// (Reader.Count, Reader.take), so what a decoder allocates grows with the
// body it was given, never with the numbers written in it.

type decoder interface {
	Decode(r *Reader, version uint16) error
}

// allDecoders is every message this package decodes.
var allDecoders = []struct {
	name string
	new  func() decoder
}{
	{"BatchScriptRequest", func() decoder { return new(BatchScriptRequest) }},
	{"BatchScriptResponse", func() decoder { return new(BatchScriptResponse) }},
	{"BuildInfo", func() decoder { return new(BuildInfo) }},
	{"BuildInfoRequest", func() decoder { return new(BuildInfoRequest) }},
	{"ConfigRequest", func() decoder { return new(ConfigRequest) }},
	{"ConfigResponse", func() decoder { return new(ConfigResponse) }},
	{"FedInfo", func() decoder { return new(FedInfo) }},
	{"FedInfoRequest", func() decoder { return new(FedInfoRequest) }},
	{"JobArrayErrors", func() decoder { return new(JobArrayErrors) }},
	{"JobDesc", func() decoder { return new(JobDesc) }},
	{"JobInfoMsg", func() decoder { return new(JobInfoMsg) }},
	{"JobInfoRequest", func() decoder { return new(JobInfoRequest) }},
	{"JobInfoSingleRequest", func() decoder { return new(JobInfoSingleRequest) }},
	{"JobNotifyRequest", func() decoder { return new(JobNotifyRequest) }},
	{"JobReadyRequest", func() decoder { return new(JobReadyRequest) }},
	{"JobReadyResponse", func() decoder { return new(JobReadyResponse) }},
	{"JobRequeueRequest", func() decoder { return new(JobRequeueRequest) }},
	{"JobStateRequest", func() decoder { return new(JobStateRequest) }},
	{"JobStateResponse", func() decoder { return new(JobStateResponse) }},
	{"JobStepInfoMsg", func() decoder { return new(JobStepInfoMsg) }},
	{"JobStepInfoRequest", func() decoder { return new(JobStepInfoRequest) }},
	{"JobUserInfoRequest", func() decoder { return new(JobUserInfoRequest) }},
	{"KillJobRequest", func() decoder { return new(KillJobRequest) }},
	{"KillJobsRequest", func() decoder { return new(KillJobsRequest) }},
	{"KillJobsResponse", func() decoder { return new(KillJobsResponse) }},
	{"LicenseInfoMsg", func() decoder { return new(LicenseInfoMsg) }},
	{"LicenseInfoRequest", func() decoder { return new(LicenseInfoRequest) }},
	{"NodeInfoMsg", func() decoder { return new(NodeInfoMsg) }},
	{"NodeInfoRequest", func() decoder { return new(NodeInfoRequest) }},
	{"NodeInfoSingleRequest", func() decoder { return new(NodeInfoSingleRequest) }},
	{"PartitionInfoMsg", func() decoder { return new(PartitionInfoMsg) }},
	{"PartitionInfoRequest", func() decoder { return new(PartitionInfoRequest) }},
	{"PingRequest", func() decoder { return new(PingRequest) }},
	{"ReservationInfoMsg", func() decoder { return new(ReservationInfoMsg) }},
	{"ReservationInfoRequest", func() decoder { return new(ReservationInfoRequest) }},
	{"SetDebugLevelRequest", func() decoder { return new(SetDebugLevelRequest) }},
	{"ShareInfo", func() decoder { return new(ShareInfo) }},
	{"ShareInfoRequest", func() decoder { return new(ShareInfoRequest) }},
	{"SlurmRCMsg", func() decoder { return new(SlurmRCMsg) }},
	{"StatsInfo", func() decoder { return new(StatsInfo) }},
	{"StatsInfoRequest", func() decoder { return new(StatsInfoRequest) }},
	{"SubmitResponse", func() decoder { return new(SubmitResponse) }},
	{"SuspendRequest", func() decoder { return new(SuspendRequest) }},
	{"ShutdownRequest", func() decoder { return new(ShutdownRequest) }},
	{"UpdateNodeRequest", func() decoder { return new(UpdateNodeRequest) }},
	{"TopJobRequest", func() decoder { return new(TopJobRequest) }},
	{"WillRunResponse", func() decoder { return new(WillRunResponse) }},
	// The slurmdbd stand-in's, and sprio's.
	{"JobCond", func() decoder { return new(JobCond) }},
	{"GotJobs", func() decoder { return new(GotJobs) }},
	{"AssocCond", func() decoder { return new(AssocCond) }},
	{"UserCond", func() decoder { return new(UserCond) }},
	{"AccountCond", func() decoder { return new(AccountCond) }},
	{"ClusterCond", func() decoder { return new(ClusterCond) }},
	{"QOSCond", func() decoder { return new(QOSCond) }},
	{"TRESCond", func() decoder { return new(TRESCond) }},
	{"WCKeyCond", func() decoder { return new(WCKeyCond) }},
	{"GotAssocs", func() decoder { return new(GotAssocs) }},
	{"GotUsers", func() decoder { return new(GotUsers) }},
	{"GotAccounts", func() decoder { return new(GotAccounts) }},
	{"GotClusters", func() decoder { return new(GotClusters) }},
	{"GotQOS", func() decoder { return new(GotQOS) }},
	{"GotWCKeys", func() decoder { return new(GotWCKeys) }},
	{"PriorityFactorsRequest", func() decoder { return new(PriorityFactorsRequest) }},
	{"PriorityFactorsInfo", func() decoder { return new(PriorityFactorsInfo) }},
}

// checkAllocBound decodes body with d in version v and fails if that
// allocated more than the bound for the body's size.
func checkAllocBound(t testing.TB, name string, d decoder, v uint16, body []byte) {
	t.Helper()
	fuzzcheck.AllocBound(t, name+" "+VersionName(v), len(body), func() {
		r := NewReader(body)
		_ = d.Decode(&r, v)
	})
}

// hostileBodies are bodies made of the numbers a hostile client would
// write in counts and lengths: all ones, NO_VAL-1, just under and over
// the bytes left, big values behind a few valid small fields.
func hostileBodies() [][]byte {
	var out [][]byte
	for _, n := range []int{4, 16, 64, 512, 4096} {
		for _, word := range []uint32{0xffffffff, 0xfffffffd, 0x7fffffff, 0x00ffffff, 0x0000ffff, 0x00001000, uint32(n), uint32(n + 1)} {
			b := make([]byte, n)
			for i := 0; i+4 <= n; i += 4 {
				binary.BigEndian.PutUint32(b[i:], word)
			}
			out = append(out, b)
			// Small fields first (a version, flags, a short string),
			// then the hostile word.
			p := append([]byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0}, b...)
			out = append(out, p)
		}
	}
	out = append(out, bytes.Repeat([]byte{0xff}, 1<<16))
	return out
}

func TestAllocBound(t *testing.T) {
	bodies := hostileBodies()
	for _, d := range allDecoders {
		for _, v := range Versions {
			for _, b := range bodies {
				checkAllocBound(t, d.name, d.new(), v, b)
			}
		}
	}
}

// FuzzAllocBound feeds every input to one decoder (picked by the first
// byte) in one version: coverage leads the fuzzer into each decoder's
// counted fields; any allocation past the bound fails.
func FuzzAllocBound(f *testing.F) {
	for i := range allDecoders {
		for _, b := range hostileBodies()[:8] {
			f.Add(byte(i), uint16(V24_11), b)
		}
	}
	f.Fuzz(func(t *testing.T, which byte, v uint16, body []byte) {
		d := allDecoders[int(which)%len(allDecoders)]
		checkAllocBound(t, d.name, d.new(), Versions[int(v)%len(Versions)], body)
	})
}
