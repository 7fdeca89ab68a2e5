"""A line chart as one standalone SVG file, no plotting library needed - the Python twin of
write_svg_chart in examples/common/cli.cpp: panels stacked vertically sharing the x axis, each with
its own y range and legend."""

from xml.sax.saxutils import escape

WIDTH, PANEL_HEIGHT, LEFT, RIGHT, TOP, GAP = 640, 220, 60, 20, 40, 50
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]


def write_chart(path, title, panels, x_label):
    """panels: [(panel title, [(series name, [(x, y), ...]), ...]), ...]."""
    xs = [x for _, series in panels for _, points in series for x, _ in points]
    if not xs:
        return
    x_low, x_high = min(xs), max(xs)
    if x_high == x_low:
        x_high = x_low + 1
    height = TOP + len(panels) * (PANEL_HEIGHT + GAP)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
             f'<text x="{LEFT}" y="24" font-size="15">{escape(title)}</text>']
    for index, (panel_title, series) in enumerate(panels):
        top = TOP + index * (PANEL_HEIGHT + GAP) + 10
        ys = [y for _, points in series for _, y in points]
        y_low, y_high = min(ys), max(ys)
        pad = (y_high - y_low) * 0.05 or 1.0
        y_low, y_high = y_low - pad, y_high + pad

        def x_at(x):
            return LEFT + (x - x_low) / (x_high - x_low) * (WIDTH - LEFT - RIGHT)

        def y_at(y, top=top, y_low=y_low, y_high=y_high):
            return top + (y_high - y) / (y_high - y_low) * PANEL_HEIGHT

        parts.append(f'<rect x="{LEFT}" y="{top}" width="{WIDTH - LEFT - RIGHT}" '
                     f'height="{PANEL_HEIGHT}" fill="none" stroke="#888"/>')
        parts.append(f'<text x="{LEFT}" y="{top - 4}">{escape(panel_title)}</text>')
        for value in (y_low, (y_low + y_high) / 2, y_high):
            parts.append(f'<text x="{LEFT - 6}" y="{y_at(value) + 4:.1f}" '
                         f'text-anchor="end">{value:.3g}</text>')
        for number, (name, points) in enumerate(series):
            color = COLORS[number % len(COLORS)]
            coords = " ".join(f"{x_at(x):.1f},{y_at(y):.1f}" for x, y in points)
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
                         f'points="{coords}"/>')
            if len(points) == 1:
                x, y = points[0]
                parts.append(f'<circle cx="{x_at(x):.1f}" cy="{y_at(y):.1f}" r="3" '
                             f'fill="{color}"/>')
            parts.append(f'<text x="{WIDTH - RIGHT - 8}" y="{top + 16 + 16 * number}" '
                         f'text-anchor="end" fill="{color}">{escape(name)}</text>')
    bottom = TOP + len(panels) * (PANEL_HEIGHT + GAP) - GAP + 10
    for value in (x_low, (x_low + x_high) / 2, x_high):
        x = LEFT + (value - x_low) / (x_high - x_low) * (WIDTH - LEFT - RIGHT)
        parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">'
                     f'{value:.3g}</text>')
    parts.append(f'<text x="{WIDTH / 2}" y="{bottom + 34}" text-anchor="middle">'
                 f'{escape(x_label)}</text></svg>')
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")
