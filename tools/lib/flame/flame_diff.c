// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Differential flame graphs: the graph has the "after" profile's shape and
 * each frame the colour of its change since "before". */
#include <math.h>

#include "flame/flame_int.h"

void flame__diff_prepare(const struct flamegraph *fg, const struct layout *L, bool normalize,
			 struct flame_diff *d)
{
	size_t i;

	*d = (struct flame_diff){ .on = fg->has_before, .before_scale = 1 };
	if (!d->on)
		return;
	if (normalize && fg->nodes[0].before)
		d->before_scale = (double)fg->nodes[0].after / (double)fg->nodes[0].before;
	for (i = 0; i < L->n; i++) {
		double dl = fabs((double)L->v[i].after - (double)L->v[i].before * d->before_scale);

		if (L->v[i].node != 0 && dl > d->max_delta)
			d->max_delta = dl;
	}
}

void flame__diff_color(const struct flame_diff *d, const struct drawn *dr, unsigned char rgb[3])
{
	double delta = (double)dr->after - (double)dr->before * d->before_scale, v;

	v = d->max_delta > 0 ? fabs(delta) / d->max_delta : 0;
	if (v > 1)
		v = 1;
	/* white when unchanged, saturating towards red (grew) or blue */
	if (delta > 0)
		rgb[0] = 255, rgb[1] = rgb[2] = (unsigned char)lround(250 - 190 * v);
	else if (delta < 0)
		rgb[2] = 255, rgb[0] = rgb[1] = (unsigned char)lround(250 - 190 * v);
	else
		rgb[0] = rgb[1] = rgb[2] = 250;
}
