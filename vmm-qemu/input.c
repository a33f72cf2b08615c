/* vmm-qemu/input.c: see input.h. */
#include "vmm-qemu/input.h"

int vmm_input_abs(int p, int size)
{
	long long v;

	if (size <= 0)
		return 0;
	if (p < 0)
		p = 0;
	if (p >= size)
		p = size - 1;
	v = ((2LL * p + 1) * (VMM_ABS_MAX + 1)) / (2LL * size);
	return v > VMM_ABS_MAX ? VMM_ABS_MAX : (int)v;
}

json_t *vmm_input_move(int x, int y, int w, int h)
{
	return json_pack("{s:[{s:s, s:{s:s, s:i}}, {s:s, s:{s:s, s:i}}]}", "events", "type", "abs",
			 "data", "axis", "x", "value", vmm_input_abs(x, w), "type", "abs", "data",
			 "axis", "y", "value", vmm_input_abs(y, h));
}

json_t *vmm_input_button(const char *button, bool down)
{
	return json_pack("{s:[{s:s, s:{s:b, s:s}}]}", "events", "type", "btn", "data", "down", down,
			 "button", button);
}

json_t *vmm_input_key(const char *qcode, bool down)
{
	return json_pack("{s:[{s:s, s:{s:b, s:{s:s, s:s}}}]}", "events", "type", "key", "data",
			 "down", down, "key", "type", "qcode", "data", qcode);
}
