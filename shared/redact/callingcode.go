package redact

// callingCodes are the country calling codes assigned in ITU-T E.164 (with its annex of
// international networks and services such as 800 freephone and 882/883 networks). They form
// a prefix code: no code is the start of another.
var callingCodes = func() (t [1000]uint8) {
	for _, c := range []int{1, 7} {
		t[c] = 1
	}
	for _, c := range []int{
		20, 27, 30, 31, 32, 33, 34, 36, 39, 40, 41, 43, 44, 45, 46, 47, 48, 49,
		51, 52, 53, 54, 55, 56, 57, 58, 60, 61, 62, 63, 64, 65, 66, 81, 82, 84, 86,
		90, 91, 92, 93, 94, 95, 98,
	} {
		t[c] = 2
	}
	three := []int{
		211, 212, 213, 216, 218, 290, 291, 297, 298, 299,
		370, 371, 372, 373, 374, 375, 376, 377, 378, 379, 380, 381, 382, 383, 385, 386, 387, 389,
		420, 421, 423, 670, 672, 673, 674, 675, 676, 677, 678, 679,
		680, 681, 682, 683, 685, 686, 687, 688, 689, 690, 691, 692,
		800, 808, 850, 852, 853, 855, 856, 870, 878, 880, 881, 882, 883, 886, 888,
		970, 971, 972, 973, 974, 975, 976, 977, 979, 992, 993, 994, 995, 996, 998,
	}
	for c := 220; c <= 258; c++ { // West, Central and East Africa
		three = append(three, c)
	}
	for _, r := range [][2]int{{260, 269}, {350, 359}, {500, 509}, {590, 599}, {960, 968}} {
		for c := r[0]; c <= r[1]; c++ {
			three = append(three, c)
		}
	}
	for _, c := range three {
		t[c] = 3
	}
	return t
}()

// callingCodeLen returns the length of the country calling code d starts with, or 0.
func callingCodeLen(d []byte) int {
	v := 0
	for k := 0; k < 3 && k < len(d); k++ {
		v = v*10 + int(d[k]-'0')
		if int(callingCodes[v]) == k+1 {
			return k + 1
		}
	}
	return 0
}
