"""The language-model example's chart: training and validation loss per epoch, with the unigram
baseline as a dashed line, as one standalone SVG (no plotting library needed)."""

from xml.sax.saxutils import escape

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 360, 60, 20, 40, 40


def write_chart(path, title, history, baseline):
    """history: (epoch, train_loss, val_loss) rows; baseline: the unigram loss."""
    epochs = [row[0] for row in history]
    values = [v for row in history for v in row[1:]] + [baseline]
    low, high = min(values) * 0.95, max(values) * 1.05
    first, last = min(epochs), max(max(epochs), min(epochs) + 1)

    def x(epoch):
        return LEFT + (epoch - first) / (last - first) * (WIDTH - LEFT - RIGHT)

    def y(value):
        return TOP + (high - value) / (high - low) * (HEIGHT - TOP - BOTTOM)

    def line(points, color, dash=""):
        coords = " ".join(f"{x(e):.1f},{y(v):.1f}" for e, v in points)
        return (f'<polyline fill="none" stroke="{color}" stroke-width="2" {dash} '
                f'points="{coords}"/>')

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
             f'<text x="{LEFT}" y="24" font-size="15">{escape(title)}</text>']
    for i in range(5):  # horizontal grid with loss labels
        value = low + (high - low) * i / 4
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value):.1f}" '
                     f'y2="{y(value):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">'
                     f'{value:.2f}</text>')
    for epoch in epochs:
        parts.append(f'<text x="{x(epoch):.1f}" y="{HEIGHT - BOTTOM + 18}" '
                     f'text-anchor="middle">{epoch}</text>')
    parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT - 6}" text-anchor="middle">epoch</text>')
    parts.append(line([(first, baseline), (last, baseline)], "#999", 'stroke-dasharray="6,4"'))
    parts.append(line([(r[0], r[1]) for r in history], "#1f77b4"))
    parts.append(line([(r[0], r[2]) for r in history], "#d62728"))
    for i, (label, color) in enumerate((("train loss", "#1f77b4"),
                                        ("validation loss", "#d62728"),
                                        ("unigram baseline", "#999"))):
        parts.append(f'<text x="{WIDTH - RIGHT - 130}" y="{TOP + 16 * i}" fill="{color}">'
                     f'{label}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")
