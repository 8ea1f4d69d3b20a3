package render

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
