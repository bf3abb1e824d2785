"""Bar charts for the benchmark reports, drawn with matplotlib from the
private virtualenv: python -m harness.plot SPEC.json OUT.png

SPEC is {"title": str, "panels": [{"metric": str, "unit": str,
"bars": [{"label": str, "median": x, "low": x, "high": x,
"points": [x]}], "lines": [{"y": x, "label": str}]}]}; each panel shows
the medians as bars, the spread (lowest to highest) as error bars, every
trial as a dot and each target's level as a dashed line."""

import json
import sys


def draw(spec, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = spec["panels"]
    cols = min(3, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows),
                             squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        bars = panel["bars"]
        x = range(len(bars))
        med = [b["median"] for b in bars]
        err = [[b["median"] - b["low"] for b in bars],
               [b["high"] - b["median"] for b in bars]]
        ax.bar(x, med, yerr=err, capsize=4, color="#4c72b0")
        for i, b in enumerate(bars):
            pts = b.get("points", [])
            ax.scatter([i + 0.1 * (k % 5 - 2) for k in range(len(pts))],
                       pts, s=8, color="black", zorder=3)
        for line in panel.get("lines", []):
            ax.axhline(line["y"], ls="--", lw=1, color="#c44e52",
                       label=line["label"])
        if panel.get("lines"):
            ax.legend(fontsize=6)
        ax.set_xticks(list(x), [b["label"] for b in bars], rotation=20,
                      ha="right", fontsize=8)
        ax.set_title(panel["metric"], fontsize=9)
        ax.set_ylabel(panel["unit"], fontsize=8)
        if panel.get("log"):
            ax.set_yscale("symlog")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(spec["title"], fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main(argv):
    if len(argv) != 3:
        print("usage: python -m harness.plot SPEC.json OUT.png",
              file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        draw(json.load(f), argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
