/* ptflame - flamegraph/: the SVG's embedded script, built from
 * flamegraph/svg_script.js by flamegraph/embed_script.py. */
#ifndef PTFLAME_FG_SVG_SCRIPT_H
#define PTFLAME_FG_SVG_SCRIPT_H

extern const char fg_svg_script[];

#endif
