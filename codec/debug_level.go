package codec

// SetDebugLevelRequest is REQUEST_SET_DEBUG_LEVEL (1010), `scontrol
// setdebug LEVEL`: set_debug_level_msg_t, one u32 (a Slurm log level,
// 0 quiet ... 9 debug5; scontrol sends the number), the same in every
// release from 22.05 to 26.05.
type SetDebugLevelRequest struct {
	Level uint32
}

func (m *SetDebugLevelRequest) Decode(r *Reader, version uint16) error {
	m.Level = r.U32()
	return miscEnd(r)
}

func (m *SetDebugLevelRequest) Encode(w *Writer, version uint16) { w.U32(m.Level) }
