//! Paper-style charts drawn with plotters, as SVG and PNG: panels of lines with error bars or
//! grouped bars with whiskers, log axes, legends, reference lines.
//!
//! Figures are described as data (`Figure`, `Panel`, `Series`) by `plot.rs` and drawn here, so
//! the figure logic never touches plotters and every figure looks alike.

use causim_models::catalogue;
use causim_pipeline::out_file;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::path::Path;

/// One point: `y` with an interval `[lo, hi]` (error bar or whisker; equal to `y` for none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Pt {
    pub fn new(x: f64, y: f64) -> Pt {
        Pt { x, y, lo: y, hi: y }
    }

    /// `y ± ci`.
    pub fn ci(x: f64, y: f64, ci: f64) -> Pt {
        Pt { x, y, lo: y - ci, hi: y + ci }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Solid line with filled markers.
    Line,
    /// Dashed line with hollow markers (reference values, such as the paper's).
    Dashed,
    /// Hollow markers only.
    Markers,
    /// Bars (panels with categories): one bar per category, side by side with other series.
    Bars,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub color: RGBColor,
    pub style: Style,
    pub points: Vec<Pt>,
}

/// A horizontal reference line.
#[derive(Clone, Debug)]
pub struct HLine {
    pub y: f64,
    pub label: String,
    pub color: RGBColor,
}

#[derive(Clone, Debug, Default)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    /// Category names for bar charts (x = index).
    pub categories: Option<Vec<String>>,
    pub series: Vec<Series>,
    pub hlines: Vec<HLine>,
    /// Forced y range (else from the data).
    pub y_range: Option<(f64, f64)>,
    pub legend_at: Option<Corner>,
    /// A single bar series coloured per category (one bar per system).
    pub category_colors: Option<Vec<RGBColor>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    UpperLeft,
    UpperRight,
    LowerRight,
    LowerLeft,
    /// Beside the plot, on the right (for legends with many entries over busy data).
    OutsideRight,
    /// None in this panel: another panel of the figure carries the legend of the same series.
    Elsewhere,
}

#[derive(Clone, Debug)]
pub struct Figure {
    pub name: String,
    pub title: String,
    pub panels: Vec<Panel>,
    /// Lines printed under the panels (how the numbers were made).
    pub notes: Vec<String>,
}

/// Series colours, the same in every figure: black for the paper's numbers, a protocol's own
/// colour (from the catalogue) for its series, a mutant's by its place in its protocol's list
/// (checked first, so "CausalMesh no_carry_local_writes" is the mutant's; the correct protocol
/// takes the first palette colour), else a colour derived from the label.
pub fn color_of(label: &str) -> RGBColor {
    let l = label.to_lowercase();
    if l.contains("paper") {
        return RGBColor(0, 0, 0);
    }
    if let Some(i) = catalogue::mutant_index(label) {
        return palette_at(i + 1);
    }
    if let Some(style) = catalogue::series_style(label) {
        let (r, g, b) = style.colour;
        return RGBColor(r, g, b);
    }
    if l.contains("correct") || l.contains("simulated") {
        return palette_at(0);
    }
    palette(label)
}

/// Distinct colours for series that are not systems (mutants, say), by position.
pub fn palette_at(i: usize) -> RGBColor {
    const P: [RGBColor; 10] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(230, 159, 0),
        RGBColor(204, 121, 167),
        RGBColor(86, 180, 233),
        RGBColor(120, 60, 20),
        RGBColor(90, 90, 90),
        RGBColor(160, 40, 40),
        RGBColor(40, 40, 160),
    ];
    P[i % P.len()]
}

fn palette(label: &str) -> RGBColor {
    const P: [RGBColor; 8] = [
        RGBColor(204, 121, 167),
        RGBColor(86, 180, 233),
        RGBColor(240, 228, 66),
        RGBColor(0, 158, 115),
        RGBColor(213, 94, 0),
        RGBColor(100, 100, 200),
        RGBColor(150, 80, 40),
        RGBColor(90, 90, 90),
    ];
    let h = label.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    P[(h % P.len() as u64) as usize]
}

/// Draws the figure as `<dir>/<name>.svg` and `<dir>/<name>.png`, writing through no symbolic
/// link (see `causim_pipeline::out_file`).
pub fn render(fig: &Figure, dir: &Path) -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let svg = dir.join(format!("{}.svg", fig.name));
    let png = dir.join(format!("{}.png", fig.name));
    let size = size_of(fig);
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        draw_figure(&root, fig)?;
        root.present().map_err(|e| format!("cannot draw {}: {e}", svg.display()))?;
    }
    out_file::write(&svg, text).map_err(|e| format!("cannot write {}: {e}", svg.display()))?;
    // plotters encodes a PNG only into a file it opens itself, by name: so it draws into a
    // fresh hidden sibling (made a plain file first), which a rename then puts in place. A
    // link at `png` is refused first, like at every output file (and a rename would replace a
    // link, never write through it).
    out_file::probe(&png).map_err(|e| format!("cannot write {}: {e}", png.display()))?;
    let staging = dir.join(format!(".{}.partial.png", fig.name));
    let _ = std::fs::remove_file(&staging);
    out_file::create(&staging).map_err(|e| format!("cannot write {}: {e}", staging.display()))?;
    {
        let root = BitMapBackend::new(&staging, size).into_drawing_area();
        draw_figure(&root, fig)?;
        root.present().map_err(|e| format!("cannot write {}: {e}", staging.display()))?;
    }
    std::fs::rename(&staging, &png).map_err(|e| format!("cannot move {} to {}: {e}", staging.display(), png.display()))?;
    Ok((svg, png))
}

/// The notes, wrapped to the figure's width (about 7.4 pixels per character at 15 px).
fn note_lines(fig: &Figure) -> Vec<String> {
    let width = size_of_panels(fig).0 as usize;
    let max_chars = (width.saturating_sub(28) * 10 / 74).max(40);
    let mut out = Vec::new();
    for note in &fig.notes {
        let mut line = String::new();
        for word in note.split(' ') {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > max_chars {
                out.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            out.push(line);
        }
    }
    out
}

/// 900 px for one panel, 720 per panel for more, plus the width of legends drawn beside them.
fn size_of_panels(fig: &Figure) -> (u32, u32) {
    let n = fig.panels.len().max(1) as u32;
    let beside: u32 = fig.panels.iter().filter(|p| p.legend_at == Some(Corner::OutsideRight)).map(outside_legend_width).sum();
    (if n == 1 { 900 } else { 720 * n.min(3) } + beside, 560)
}

fn size_of(fig: &Figure) -> (u32, u32) {
    let (w, h) = size_of_panels(fig);
    (w, h + 22 * note_lines(fig).len() as u32)
}

fn draw_figure<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing {}: {e:?}", fig.name);
    root.fill(&WHITE).map_err(e)?;
    let (_, h) = root.dim_in_pixel();
    let lines = note_lines(fig);
    let notes_h = 22 * lines.len() as u32 + if lines.is_empty() { 0 } else { 8 };
    let (main, notes) = root.split_vertically(h - notes_h);
    let main = main.titled(&fig.title, ("sans-serif", 24).into_font().style(FontStyle::Bold)).map_err(e)?;
    for (i, line) in lines.iter().enumerate() {
        notes
            .draw(&Text::new(line.clone(), (14, 4 + 22 * i as i32), ("sans-serif", 15).into_font().color(&RGBColor(60, 60, 60))))
            .map_err(e)?;
    }
    let areas = main.split_evenly((1, fig.panels.len().max(1)));
    for (area, panel) in areas.iter().zip(&fig.panels) {
        draw_panel_dispatch(area, panel)?;
    }
    Ok(())
}

/// The data's y extent, including intervals and reference lines.
fn y_extent(p: &Panel) -> (f64, f64) {
    if let Some(r) = p.y_range {
        return r;
    }
    let mut ys: Vec<f64> = p.series.iter().flat_map(|s| s.points.iter().flat_map(|q| [q.y, q.lo, q.hi])).collect();
    ys.extend(p.hlines.iter().map(|h| h.y));
    ys.retain(|y| y.is_finite() && (!p.y_log || *y > 0.0));
    let bars = p.series.iter().any(|s| s.style == Style::Bars);
    if ys.is_empty() {
        return if p.y_log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if p.y_log {
        // From a power of ten, so the lowest decade has its ticks too (plotters draws minor
        // ticks only above the first power of ten).
        let lo = if bars { lo / 3.0 } else { lo / 1.1 };
        (10f64.powf(lo.log10().floor()), hi * 2.5)
    } else {
        let lo = if lo >= 0.0 { 0.0 } else { lo * 1.1 };
        let hi = if hi <= lo { lo + 1.0 } else { hi + (hi - lo) * 0.22 };
        (lo, hi)
    }
}

fn x_extent(p: &Panel) -> (f64, f64) {
    if let Some(c) = &p.categories {
        return (-0.5, c.len() as f64 - 0.5);
    }
    let mut xs: Vec<f64> = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.x)).collect();
    xs.retain(|x| x.is_finite() && (!p.x_log || *x > 0.0));
    if xs.is_empty() {
        return if p.x_log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if p.x_log {
        (10f64.powf((lo / 1.1).log10().floor()), hi * 1.5)
    } else {
        let pad = if hi > lo { (hi - lo) * 0.06 } else { 1.0 };
        (lo - pad, hi + pad)
    }
}

/// Intervals of non-negative data stop at 0; on a log axis, at a twentieth of the value.
fn clamp_intervals(p: &Panel) -> Panel {
    let mut p = p.clone();
    let nonneg = p.series.iter().all(|s| s.points.iter().all(|q| q.y >= 0.0));
    for s in &mut p.series {
        for q in &mut s.points {
            if p.y_log {
                q.lo = q.lo.max(q.y / 20.0);
            } else if nonneg {
                q.lo = q.lo.max(0.0);
            }
        }
    }
    p
}

/// The `i`-th marker shape (circle, square, triangle, diamond) at `at`, after a line `line_w`
/// pixels long (legends; 0 for none). One element type for every shape (a macro, so plotters
/// infers it): the shapes not chosen are drawn transparent.
macro_rules! marker {
    ($at:expr, $i:expr, $filled:expr, $color:expr, $line_w:expr) => {{
        let (i, color, line_w): (usize, RGBColor, i32) = ($i, $color, $line_w);
        let st = marker_style($filled, color);
        let none = ShapeStyle::from(&TRANSPARENT);
        let pick = |k: usize| if i % 4 == k { st } else { none };
        let c = if line_w > 0 { line_w / 2 } else { 0 };
        let line_style = if line_w > 0 { ShapeStyle::from(&color).stroke_width(2) } else { none };
        EmptyElement::at($at)
            + PathElement::new(vec![(0, 0), (line_w.max(1), 0)], line_style)
            + Circle::new((c, 0), 5, pick(0))
            + Rectangle::new([(c - 4, -4), (c + 4, 4)], pick(1))
            + TriangleMarker::new((c, 0), 6, pick(2))
            + Polygon::new(vec![(c, -6), (c - 5, 0), (c, 6), (c + 5, 0)], pick(3))
    }};
}

/// Error bars or whiskers: a vertical line from `lo` to `hi` with caps `half` pixels either
/// side (plotters' ErrorBar would also circle the mean, hiding the series' own marker).
fn draw_whiskers<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    bars: impl Iterator<Item = (f64, f64, f64)>,
    style: ShapeStyle,
    half: i32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (x, lo, hi) in bars {
        chart.draw_series(std::iter::once(PathElement::new(vec![(x, lo), (x, hi)], style)))?;
        for y in [lo, hi] {
            chart.draw_series(std::iter::once(EmptyElement::at((x, y)) + PathElement::new(vec![(-half, 0), (half, 0)], style)))?;
        }
    }
    Ok(())
}

/// Width of a legend drawn beside the plot.
fn outside_legend_width(p: &Panel) -> u32 {
    let longest =
        p.series.iter().map(|s| s.label.chars().count()).chain(p.hlines.iter().map(|h| h.label.chars().count())).max().unwrap_or(0);
    (longest as u32 * 15 / 2 + 56).min(420)
}

/// A legend beside the plot: one row per series (line and marker, or a box for bars) and per
/// labelled reference line.
fn draw_outside_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing the legend of {:?}: {e:?}", p.title);
    let font = ("sans-serif", 14).into_font().color(&BLACK);
    let mut y = 60;
    let mut line_idx = 0;
    for s in &p.series {
        match s.style {
            Style::Bars => area.draw(&Rectangle::new([(8, y - 6), (24, y + 6)], s.color.filled())).map_err(e)?,
            Style::Line | Style::Dashed | Style::Markers => {
                let w = if s.style == Style::Markers { 0 } else { 24 };
                let filled = s.style == Style::Line;
                area.draw(&marker!((4, y), if filled { line_idx } else { 0 }, filled, s.color, w)).map_err(e)?;
                line_idx += usize::from(filled);
            }
        }
        area.draw(&Text::new(s.label.clone(), (36, y - 8), font.clone())).map_err(e)?;
        y += 22;
    }
    for h in p.hlines.iter().filter(|h| !h.label.is_empty()) {
        let style = ShapeStyle::from(&h.color).stroke_width(2);
        area.draw(&PathElement::new(vec![(4, y), (28, y)], style)).map_err(e)?;
        area.draw(&Text::new(h.label.clone(), (36, y - 8), font.clone())).map_err(e)?;
        y += 22;
    }
    Ok(())
}

fn marker_style(filled: bool, color: RGBColor) -> ShapeStyle {
    if filled { color.filled() } else { ShapeStyle::from(&color).stroke_width(2) }
}

fn draw_panel_dispatch<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Result<(), String> {
    let p = &clamp_intervals(p);
    if p.legend_at == Some(Corner::OutsideRight) {
        let (w, _) = area.dim_in_pixel();
        let lw = outside_legend_width(p);
        let (plot, legend) = area.split_horizontally(w.saturating_sub(lw));
        draw_outside_legend(&legend, p)?;
        return draw_panel_in(&plot, p);
    }
    draw_panel_in(area, p)
}

fn draw_panel_in<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Result<(), String> {
    let (x0, x1) = x_extent(p);
    let (y0, y1) = y_extent(p);
    // Plotters starts a log axis's ticks at 10^ceil(log10(start)), and computes the logarithm of
    // 0.1 or 0.01 a hair above -1 or -2, so an axis starting at such a power of ten would lose its
    // lowest decade's ticks (an unlabelled floor); starting a hair below keeps them.
    let (x0, y0) = (if p.x_log { x0 * (1.0 - 1e-9) } else { x0 }, if p.y_log { y0 * (1.0 - 1e-9) } else { y0 });
    match (p.x_log, p.y_log) {
        (false, false) => draw_panel(area, p, x0..x1, y0..y1),
        (false, true) => draw_panel(area, p, x0..x1, (y0..y1).log_scale()),
        (true, false) => draw_panel(area, p, (x0..x1).log_scale(), y0..y1),
        (true, true) => draw_panel(area, p, (x0..x1).log_scale(), (y0..y1).log_scale()),
    }
}

fn draw_panel<DB, X, Y>(area: &DrawingArea<DB, Shift>, p: &Panel, xr: X, yr: Y) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing panel {:?}: {e:?}", p.title);
    let (y_lo, _) = y_extent(p);
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 19))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(xr, yr)
        .map_err(e)?;
    let categories = p.categories.clone();
    // Integer x data (servers, say) gets integer ticks only.
    let xs: Vec<f64> = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.x)).collect();
    let integer_x = p.categories.is_none() && !p.x_log && !xs.is_empty() && xs.iter().all(|x| x.fract() == 0.0) && {
        let (lo, hi) = x_extent(p);
        hi - lo <= 24.0
    };
    let x_log = p.x_log;
    let x_decades = if p.x_log {
        let (a, b) = x_extent(p);
        (b / a).log10()
    } else {
        0.0
    };
    let y_decades = if p.y_log {
        let (a, b) = y_extent(p);
        (b / a).log10()
    } else {
        0.0
    };
    let last_x = std::cell::RefCell::new(String::new());
    let x_fmt = move |x: &f64| -> String {
        match &categories {
            Some(c) => {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < c.len() { c[i as usize].clone() } else { String::new() }
            }
            None if integer_x => {
                if (x - x.round()).abs() < 1e-6 {
                    format!("{:.0}", x)
                } else {
                    String::new()
                }
            }
            None if x_log => log_tick_label(*x, x_decades, &last_x),
            None => short(*x),
        }
    };
    let y_log = p.y_log;
    let last_y = std::cell::RefCell::new(String::new());
    let y_fmt = move |y: &f64| -> String { if y_log { log_tick_label(*y, y_decades, &last_y) } else { short(*y) } };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .light_line_style(if p.y_log || p.x_log { RGBColor(255, 255, 255) } else { RGBColor(238, 238, 238) })
        .bold_line_style(RGBColor(215, 215, 215));
    if let Some(c) = &p.categories {
        mesh.x_labels(c.len() + 1).disable_x_mesh();
    } else if integer_x {
        let (lo, hi) = x_extent(p);
        mesh.x_labels((hi - lo).ceil() as usize + 2);
    } else if p.x_log {
        // Enough key points for every 1-2-3-5 tick (the formatter picks which get labels).
        mesh.x_labels(60);
    }
    if p.y_log {
        mesh.y_labels(60);
    }
    mesh.draw().map_err(e)?;
    let n_bar_series = p.series.iter().filter(|s| s.style == Style::Bars).count().max(1);
    let group_w = 0.8;
    let bar_w = group_w / n_bar_series as f64;
    let mut bar_idx = 0;
    let mut line_idx = 0;
    for s in &p.series {
        let color = s.color;
        let solid = ShapeStyle::from(&color).stroke_width(2);
        let label = s.label.clone();
        match s.style {
            Style::Line | Style::Dashed | Style::Markers => {
                let pts: Vec<(f64, f64)> = s.points.iter().map(|q| (q.x, q.y)).collect();
                let anno = match s.style {
                    Style::Line => chart.draw_series(LineSeries::new(pts.clone(), solid)).map_err(e)?,
                    Style::Dashed => chart.draw_series(DashedLineSeries::new(pts.clone(), 8, 5, solid)).map_err(e)?,
                    _ => chart.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>()).map_err(e)?,
                };
                let style_kind = s.style;
                let line_w = if style_kind == Style::Markers { 0 } else { 20 };
                let filled = s.style == Style::Line;
                // Simulated lines cycle marker shapes; reference values keep hollow circles.
                let shape = if filled { line_idx } else { 0 };
                line_idx += usize::from(filled);
                anno.label(label).legend(move |(x, y)| marker!((x, y), shape, filled, color, line_w));
                chart.draw_series(pts.iter().map(|&(x, y)| marker!((x, y), shape, filled, color, 0))).map_err(e)?;
                draw_whiskers(&mut chart, s.points.iter().filter(|q| q.hi > q.lo).map(|q| (q.x, q.lo, q.hi)), solid, 5).map_err(e)?;
            }
            Style::Bars => {
                let off = -group_w / 2.0 + bar_w * (bar_idx as f64 + 0.5);
                bar_idx += 1;
                let base = y_lo;
                let per_category = p.category_colors.clone().filter(|_| n_bar_series == 1);
                let anno = chart
                    .draw_series(s.points.iter().filter(|q| q.y.is_finite() && (!p.y_log || q.y > 0.0)).map(|q| {
                        let x = q.x + off;
                        let c = per_category.as_ref().and_then(|cs| cs.get(q.x.round() as usize).copied()).unwrap_or(color);
                        Rectangle::new([(x - bar_w * 0.45, base), (x + bar_w * 0.45, q.y)], c.mix(0.85).filled())
                    }))
                    .map_err(e)?;
                anno.label(label).legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], color.filled()));
                draw_whiskers(
                    &mut chart,
                    s.points.iter().filter(|q| q.hi > q.lo && (!p.y_log || q.lo > 0.0)).map(|q| (q.x + off, q.lo, q.hi)),
                    BLACK.stroke_width(1),
                    4,
                )
                .map_err(e)?;
            }
        }
    }
    let (x0, x1) = x_extent(p);
    for h in &p.hlines {
        let style = ShapeStyle::from(&h.color).stroke_width(2);
        let anno = chart.draw_series(DashedLineSeries::new(vec![(x0, h.y), (x1, h.y)], 3, 4, style)).map_err(e)?;
        if !h.label.is_empty() {
            anno.label(h.label.clone()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
    }
    let pos = match p.legend_at.unwrap_or(Corner::UpperLeft) {
        Corner::OutsideRight | Corner::Elsewhere => return Ok(()),
        Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
        Corner::UpperRight => SeriesLabelPosition::UpperRight,
        Corner::LowerRight => SeriesLabelPosition::LowerRight,
        Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
    };
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(e)?;
    Ok(())
}

/// Whether a log-axis tick gets a label: 1, 2, 3 and 5 times a power of ten on an axis of up to
/// two decades, 1, 2 and 5 up to four, powers of ten beyond.
/// A log axis's tick label: 1, 2, 5 × 10^k only (see `log_label`), each once, since plotters
/// yields each decade's ticks twice; `last` is the axis's previous label.
fn log_tick_label(v: f64, decades: f64, last: &std::cell::RefCell<String>) -> String {
    if !log_label(v, decades) {
        return String::new();
    }
    let text = short(v);
    let mut last = last.borrow_mut();
    if *last == text {
        return String::new();
    }
    *last = text.clone();
    text
}

fn log_label(v: f64, decades: f64) -> bool {
    if v.is_nan() || v <= 0.0 || !v.is_finite() {
        return false;
    }
    let m = v / 10f64.powf(v.log10().floor());
    let keep: &[f64] = if decades <= 2.0 {
        &[1.0, 2.0, 3.0, 5.0, 10.0]
    } else if decades <= 4.0 {
        &[1.0, 2.0, 5.0, 10.0]
    } else {
        &[1.0, 10.0]
    };
    keep.iter().any(|k| (m - k).abs() < 1e-6 * k)
}

/// Numbers for tick labels: 0.5, 12, 1.2k, 3M.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if a >= 1e6 {
        trim(format!("{:.1}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.1}"))
    } else if a >= 0.01 {
        trim(format!("{v:.2}"))
    } else {
        format!("{v:.0e}")
    }
}
