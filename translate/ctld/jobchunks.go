package ctld

import (
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/lablup/slurm-frontend/codec"
	"github.com/lablup/slurm-frontend/state/memfile"
)

// Encoded job records live in chunks: the records of the jobs whose IDs
// share ID>>chunkShift, back to back, as they appear in a
// RESPONSE_JOB_INFO body. A plain squeue is answered with the frame head
// followed by every chunk (written with writev), so each record is held
// once per protocol version in use, not once more inside a whole-reply
// copy; a change re-encodes only the chunks of the jobs that changed,
// and a snapshot rebuild costs pointer comparisons, not a re-copy of the
// whole listing (64 MB at 100,000 jobs).
const chunkShift = 7 // 128 job IDs per chunk; ~800 writev pieces at 100,000 jobs

type jobChunk struct {
	key     uint32      // job ID >> chunkShift
	entries []*jobEntry // the records encoded, in ID order
	offs    []uint32    // entries[i]'s record is data's [offs[i]:offs[i+1]]
	// data is the records, in a memory file when large enough for the
	// edge to send it with sendfile (see state/memfile).
	data *memfile.Bytes
	// volatile: a record here shows other jobs' state (a dependency),
	// so the chunk is valid for its snapshot only.
	volatile bool
	// availGen: a pending job's record shows node availability (its
	// reason when drained or down nodes keep it waiting): the chunk is
	// valid while the cluster's availGen is this (0: no pending job).
	availGen uint64
}

// same reports whether c encodes exactly group (the same immutable
// entries), so a new snapshot can share it.
func (c *jobChunk) same(group []*jobEntry) bool {
	if c.volatile || len(c.entries) != len(group) {
		return false
	}
	for i, e := range group {
		if c.entries[i] != e {
			return false
		}
	}
	return true
}

// record returns entries[i]'s encoded record, valid while c is reachable.
func (c *jobChunk) record(i int) []byte { return c.data.Bytes()[c.offs[i]:c.offs[i+1]] }

// jobRecords is one snapshot's plain job listing in one version.
type jobRecords struct {
	once   sync.Once
	built  atomic.Bool // once has run: the listing is there to copy from
	chunks []*jobChunk
	starts []int32          // chunks[k]'s first entry is the snapshot's jobs[starts[k]]
	head   []byte           // frame head and RESPONSE_JOB_INFO header
	pieces []*memfile.Bytes // the chunks' bytes, to follow head
}

// each calls f with the records of the jobs at pos (indexes into the
// snapshot's jobs, mostly ascending), in order.
func (jr *jobRecords) each(pos []int32, f func(rec []byte)) {
	k := 0
	for _, i := range pos {
		if i < jr.starts[k] {
			// Positions mostly ascend (a listing); pack_one_job's order
			// (an array's own record, then its newest tasks first) goes
			// back: find the chunk again.
			k = sort.Search(len(jr.starts), func(x int) bool { return jr.starts[x] > i }) - 1
		}
		for k+1 < len(jr.starts) && jr.starts[k+1] <= i {
			k++
		}
		f(jr.chunks[k].record(int(i - jr.starts[k])))
	}
}

// Up to 24.05 a job record echoes the request's show_flags, so a listing
// is kept per (version, flags) for the flags stock clients send: squeue
// sends SHOW_LOCAL, squeue -a SHOW_ALL|SHOW_LOCAL (the captures),
// scontrol show job none or SHOW_ALL, and -d adds SHOW_DETAIL. Other
// flags are rare and encoded per request (a fixed set also bounds what a
// client can make us keep). From 24.11 on, records echo nothing: one
// listing per version, and one with SHOW_DETAIL.
var echoFlags = [...]uint16{
	0, showLocal, showAll, showAll | showLocal,
	showDetail, showDetail | showLocal, showDetail | showAll, showDetail | showAll | showLocal,
}

const nEcho = len(echoFlags)

// listing returns which cached listing (an index into echoFlags) answers
// a plain job listing for version v with showFlags, and false when none
// does (flags outside echoFlags up to 24.05): the records are encoded on
// the spot then.
func listing(v uint16, showFlags uint16) (echo int, ok bool) {
	if v >= codec.V24_11 {
		showFlags &= showDetail
	}
	for i, f := range echoFlags {
		if f == showFlags {
			return i, true
		}
	}
	return 0, false
}

// chunkCache holds the chunks of the latest listing built per version
// and echoed flags, for the next snapshot to reuse.
type chunkCache [nVersions][nEcho]atomic.Pointer[[]*jobChunk]

// records returns the snapshot's encoded listing for version v with the
// flags echoFlags[echo] (see listing), building it on first use from the
// previous listing's chunks.
func (s *Snapshot) records(v uint16, echo int) *jobRecords {
	jr := &s.recs[vidx(v)][echo]
	jr.once.Do(func() {
		s.buildRecords(jr, v, echo)
		jr.built.Store(true)
	})
	return jr
}

// recordsFor is records when build is true; otherwise it returns the
// listing only if it is already built (nil if not): building encodes
// every changed chunk and reads the cold jobs among them from the store,
// which the event loops must not wait for.
func (s *Snapshot) recordsFor(v uint16, echo int, build bool) *jobRecords {
	if build {
		return s.records(v, echo)
	}
	if jr := &s.recs[vidx(v)][echo]; jr.built.Load() {
		return jr
	}
	return nil
}

func (s *Snapshot) buildRecords(jr *jobRecords, v uint16, echo int) {
	var prev []*jobChunk
	if p := s.c.chunks[vidx(v)][echo].Load(); p != nil {
		prev = *p
	}
	type todo struct {
		at    int
		key   uint32
		group []*jobEntry
	}
	var chunks []*jobChunk
	var work []todo
	pi := 0
	for i := 0; i < len(s.jobs); {
		key := s.jobs[i].id >> chunkShift
		j := i + 1
		for j < len(s.jobs) && s.jobs[j].id>>chunkShift == key {
			j++
		}
		group := s.jobs[i:j:j]
		for pi < len(prev) && prev[pi].key < key {
			pi++
		}
		if pi < len(prev) && prev[pi].key == key && prev[pi].same(group) &&
			(prev[pi].availGen == 0 || prev[pi].availGen == s.cl.availGen) {
			chunks = append(chunks, prev[pi])
		} else {
			work = append(work, todo{at: len(chunks), key: key, group: group})
			chunks = append(chunks, nil)
		}
		i = j
	}
	// Encoding is read-only on the snapshot: spread a big first build
	// (a restart with 100,000 jobs) over the CPUs.
	workers := min(runtime.GOMAXPROCS(0), max(len(work)/16, 1))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch codec.Writer
			for {
				k := int(next.Add(1)) - 1
				if k >= len(work) {
					return
				}
				t := work[k]
				chunks[t.at] = s.encodeChunk(t.key, t.group, v, echoFlags[echo], &scratch)
			}
		}()
	}
	wg.Wait()
	encoded := 0
	for _, t := range work {
		encoded += chunks[t.at].data.Len()
	}
	if encoded >= bigBuild {
		freeOSMemory()
	}

	jr.chunks = chunks
	jr.starts = make([]int32, len(chunks))
	at := 0
	for k, c := range chunks {
		jr.starts[k] = int32(at)
		at += len(c.entries)
	}
	s.c.chunks[vidx(v)][echo].Store(&chunks)
	jr.pieces = make([]*memfile.Bytes, len(chunks))
	bodyLen := 0
	for i, c := range chunks {
		jr.pieces[i] = c.data
		bodyLen += c.data.Len()
	}
	hdr := codec.Writer{}
	codec.AppendJobInfoHeader(&hdr, v, uint32(len(s.jobs)), s.JobsUpdate, 0)
	jr.head = codec.AppendFrameHead(nil, v, codec.RESPONSE_JOB_INFO, nil, len(hdr.B)+bodyLen)
	jr.head = append(jr.head, hdr.B...)
}

// bigBuild is the encoded size above which a listing build (a restart,
// or the first squeue of another protocol version) is followed by
// returning the build's transient memory to the system.
const bigBuild = 16 << 20

// freeOSMemory returns a one-off burst's garbage to the system in the
// background. Left to the collector, the heap would keep (and the
// process would hold) about as much again as the build's live result
// until allocation reached the next GC goal.
func freeOSMemory() { go debug.FreeOSMemory() }

// encodeChunk encodes group in scratch, then keeps an exactly sized
// immutable copy (in a memory file when large): chunks live as long as
// their jobs do not change.
func (s *Snapshot) encodeChunk(key uint32, group []*jobEntry, v uint16, flags uint16, scratch *codec.Writer) *jobChunk {
	// entries is a copy: a slice of the snapshot's list would keep that
	// whole list alive for as long as later snapshots share the chunk.
	c := &jobChunk{key: key, entries: slices.Clone(group), offs: make([]uint32, 0, len(group)+1)}
	w := scratch
	w.B = w.B[:0]
	var cr coldReader // cold jobs are read from the store, one reader per chunk
	defer cr.close()
	for _, e := range group {
		c.offs = append(c.offs, uint32(len(w.B)))
		j := cr.view(e)
		if j.Dependency != "" {
			c.volatile = true
		}
		if codec.JobIsPending(j.State) {
			c.availGen = s.cl.availGen
		}
		// A detail record must derive from the job alone (or mark the
		// chunk volatile): chunks are shared while their jobs do not change.
		ji := s.c.jobInfo(s, j, v, flags&showDetail != 0)
		ji.EncodeFor(w, v, flags)
	}
	c.offs = append(c.offs, uint32(len(w.B)))
	c.data = memfile.New(w.B)
	return c
}

// lookup finds a job of the snapshot by ID.
func (s *Snapshot) lookup(id uint32) *jobEntry {
	i := sort.Search(len(s.jobs), func(i int) bool { return s.jobs[i].id >= id })
	if i < len(s.jobs) && s.jobs[i].id == id {
		return s.jobs[i]
	}
	return nil
}
