// ptflame - the script embedded in every SVG flame graph (flamegraph/svg.c
// writes `var fg_cfg = {...}` before it). Frames are <g class="f"> in
// #frames with data-x / data-v (offset and width in value units) and data-l
// (level, 0 = the "all" frame); the first line of a frame's <title> is its
// name. Zoom and search work on those numbers, so they stay exact.
"use strict";
(function () {
	var W = fg_cfg.width - 2 * fg_cfg.pad;
	var HIGHLIGHT = "rgb(230,0,230)";
	var frames = [];
	var zoomed = null;
	var searching = null;
	var unzoomBtn = document.getElementById("unzoom");
	var searchBtn = document.getElementById("search");
	var matchedText = document.getElementById("matched");
	var details = document.getElementById("details");

	function firstLine(s) {
		var i = s.indexOf("\n");
		return i < 0 ? s : s.slice(0, i);
	}

	var gs = document.querySelectorAll("#frames > g.f");
	for (var i = 0; i < gs.length; i++) {
		var g = gs[i], title = g.querySelector("title");
		frames.push({
			g: g, x: +g.getAttribute("data-x"), v: +g.getAttribute("data-v"),
			l: +g.getAttribute("data-l"), r: g.querySelector("rect"),
			t: g.querySelector("text"), name: firstLine(title.textContent),
			tip: title.textContent.split("\n").slice(0, 2).join("  ")
		});
		g.setAttribute("data-i", i);
	}

	// The label that fits w px: as svg.c cuts it.
	function setLabel(f, x, w) {
		var fit = Math.floor((w - 6) / fg_cfg.cw), s = f.name;
		if (fit < 3)
			s = "";
		else if (s.length > fit)
			s = s.slice(0, fit - 2) + "..";
		f.t.textContent = s;
		f.t.setAttribute("x", (x + 3).toFixed(1));
	}

	function place(f, x, w) {
		f.r.setAttribute("x", x.toFixed(1));
		f.r.setAttribute("width", w.toFixed(1));
		setLabel(f, x, w);
	}

	// Show the subtree of frame z across the full width, its ancestors as
	// full-width bars, nothing else. z null: the whole graph.
	function zoom(z) {
		var zx = z ? z.x : 0, zv = z ? z.v : fg_cfg.total, zl = z ? z.l : 0;
		zoomed = z && z.l > 0 ? z : null;
		for (var i = 0; i < frames.length; i++) {
			var f = frames[i], inside = f.l >= zl && f.x >= zx && f.x + f.v <= zx + zv;
			var above = f.l < zl && f.x <= zx && f.x + f.v >= zx + zv;
			var w = inside && zv > 0 ? f.v / zv * W : W;
			f.g.classList.toggle("parent", above);
			if ((inside && w >= fg_cfg.minpx) || above) {
				f.g.classList.remove("hide");
				place(f, fg_cfg.pad + (inside && zv > 0 ? (f.x - zx) / zv * W : 0), w);
			} else {
				f.g.classList.add("hide");
			}
		}
		unzoomBtn.classList.toggle("off", !zoomed);
	}

	// Highlight frames whose name matches re; the matched share counts
	// each stretch of time once (a match inside a match adds nothing).
	function search(term) {
		var re;
		try {
			re = new RegExp(term);
		} catch (e) {
			matchedText.textContent = "bad regular expression: " + term;
			return;
		}
		var hits = [];
		for (var i = 0; i < frames.length; i++) {
			var f = frames[i], hit = f.l > 0 && re.test(f.name);
			f.r.style.fill = hit ? HIGHLIGHT : "";
			f.g.classList.toggle("match", hit);
			if (hit)
				hits.push(f);
		}
		hits.sort(function (a, b) { return a.x - b.x || b.v - a.v; });
		var sum = 0, end = -1;
		for (var j = 0; j < hits.length; j++) {
			if (hits[j].x >= end) {
				sum += hits[j].v;
				end = hits[j].x + hits[j].v;
			}
		}
		searching = term;
		var pct = fg_cfg.total ? 100 * sum / fg_cfg.total : 0;
		matchedText.textContent = "Matched: " + pct.toFixed(2) + "% (" + hits.length +
			" frame" + (hits.length == 1 ? "" : "s") + ")";
		searchBtn.textContent = "Reset Search";
	}

	function resetSearch() {
		for (var i = 0; i < frames.length; i++) {
			frames[i].r.style.fill = "";
			frames[i].g.classList.remove("match");
		}
		searching = null;
		matchedText.textContent = "";
		searchBtn.textContent = "Search";
	}

	function askSearch() {
		if (searching !== null) {
			resetSearch();
			return;
		}
		var term = window.prompt("Search for a frame name (regular expression):", "");
		if (term)
			search(term);
	}

	function frameOf(el) {
		while (el && el !== document && !(el.classList && el.classList.contains("f")))
			el = el.parentNode;
		return el && el !== document ? frames[+el.getAttribute("data-i")] : null;
	}

	document.getElementById("frames").addEventListener("click", function (e) {
		var f = frameOf(e.target);
		if (f)
			zoom(f.l > 0 && f !== zoomed ? f : null);
	});
	document.getElementById("frames").addEventListener("mouseover", function (e) {
		var f = frameOf(e.target);
		details.textContent = f ? f.tip : " ";
	});
	unzoomBtn.addEventListener("click", function () { zoom(null); });
	searchBtn.addEventListener("click", askSearch);
	window.addEventListener("keydown", function (e) {
		if ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F")) {
			e.preventDefault();
			askSearch();
		} else if (e.key === "Escape") {
			resetSearch();
		}
	});
	unzoomBtn.classList.add("off");
	// for scripted use (tests, consoles)
	window.ptflame = { zoom: function (i) { zoom(i == null ? null : frames[i]); },
		search: search, resetSearch: resetSearch, frames: frames };
})();
