package codec

// Protocol versions: SLURM_<rel>_PROTOCOL_VERSION = (major_index << 8).
const (
	V22_05 uint16 = 38 << 8 // 0x2600
	V23_02 uint16 = 39 << 8
	V23_11 uint16 = 40 << 8
	V24_05 uint16 = 41 << 8
	V24_11 uint16 = 42 << 8 // 0x2A00
	V25_05 uint16 = 43 << 8
	V25_11 uint16 = 44 << 8
	V26_05 uint16 = 45 << 8 // 0x2D00

	MinVersion = V22_05
	MaxVersion = V26_05
)

// Versions lists every protocol version the server answers, oldest first.
var Versions = []uint16{V22_05, V23_02, V23_11, V24_05, V24_11, V25_05, V25_11, V26_05}

// SupportedVersion reports whether v is one of Versions. Slurm only ever
// sends these exact values (minor byte zero).
func SupportedVersion(v uint16) bool {
	return v >= MinVersion && v <= MaxVersion && v&0xff == 0
}

// VersionName returns "24.11" style names for logs and reports.
func VersionName(v uint16) string {
	switch v {
	case V22_05:
		return "22.05"
	case V23_02:
		return "23.02"
	case V23_11:
		return "23.11"
	case V24_05:
		return "24.05"
	case V24_11:
		return "24.11"
	case V25_05:
		return "25.05"
	case V25_11:
		return "25.11"
	case V26_05:
		return "26.05"
	}
	return "unknown"
}
