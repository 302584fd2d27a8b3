package bench

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Chart file names, written beside results.json.
const (
	ChartGrowth = "w2-growth.png"
	ChartHTTP   = "http-latency.png"
	ChartSweep  = "w4-sweep.png"
)

// WriteCharts draws the charts the results allow into dir and returns their file names.
func WriteCharts(dir string, r *Results) ([]string, error) {
	var out []string
	w := r.Workloads
	if w.W2Growth != nil {
		if err := growthChart(filepath.Join(dir, ChartGrowth), w.W2Growth); err != nil {
			return out, err
		}
		out = append(out, ChartGrowth)
	}
	if names, groups := httpGroups(r); len(names) > 0 {
		if err := barChart(filepath.Join(dir, ChartHTTP), "Latency per function through HTTP (JWT + RLS)",
			"latency (ms)", names, []string{"p50", "p90", "p99"}, groups); err != nil {
			return out, err
		}
		out = append(out, ChartHTTP)
	}
	if w.W4 != nil {
		names := []string{"without sweep", "during sweep"}
		groups := [][]float64{
			{w.W4.CommitsWithout.Latency.P50MS, w.W4.CommitsDuring.Latency.P50MS},
			{w.W4.CommitsWithout.Latency.P99MS, w.W4.CommitsDuring.Latency.P99MS},
		}
		title := fmt.Sprintf("Commit latency, %d clients, with and without a sweep", w.W4.CommitsDuring.Clients)
		if err := barChart(filepath.Join(dir, ChartSweep), title, "commit latency (ms)", names,
			[]string{"p50", "p99"}, groups); err != nil {
			return out, err
		}
		out = append(out, ChartSweep)
	}
	more, err := peerCharts(dir, r.Comparison)
	return append(out, more...), err
}

func growthChart(path string, g *Levels[W2Growth]) error {
	p := plot.New()
	p.Title.Text = "get-context (last 12 messages) vs session length"
	p.X.Label.Text = "messages in the session"
	p.Y.Label.Text = "latency (ms)"
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, lv := range []*W2Growth{g.Store, g.HTTP} {
		if lv != nil && ticks == nil {
			for _, pt := range lv.Points {
				ticks = append(ticks, plot.Tick{Value: float64(pt.Length), Label: fmt.Sprint(pt.Length)})
			}
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	top := 0.0
	i := 0
	for _, lv := range []struct {
		name string
		g    *W2Growth
	}{{"store", g.Store}, {"HTTP", g.HTTP}} {
		if lv.g == nil || len(lv.g.Points) == 0 {
			continue
		}
		for _, pc := range []struct {
			name string
			get  func(Latency) float64
		}{{"p50", func(l Latency) float64 { return l.P50MS }}, {"p99", func(l Latency) float64 { return l.P99MS }}} {
			xys := make(plotter.XYs, len(lv.g.Points))
			for k, pt := range lv.g.Points {
				xys[k] = plotter.XY{X: float64(pt.Length), Y: pc.get(pt.Phase.Latency)}
				top = max(top, xys[k].Y)
			}
			l, s, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			l.Color = plotutil.Color(i)
			l.Dashes = plotutil.Dashes(i % 2)
			s.Color = plotutil.Color(i)
			s.Shape = plotutil.Shape(i)
			p.Add(l, s)
			p.Legend.Add(lv.name+" "+pc.name, l, s)
			i++
		}
	}
	// Room above the lines for the legend.
	p.Y.Max = top * 1.45
	return p.Save(18*vg.Centimeter, 11*vg.Centimeter, path)
}

// barChart draws groups of bars: groups[k][j] is series k (seriesNames[k]) at category j.
func barChart(path, title, ylabel string, names, seriesNames []string, groups [][]float64) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	n := len(groups)
	w := vg.Points(14)
	if len(names) <= 3 {
		w = vg.Points(40)
	}
	top := 0.0
	for _, vals := range groups {
		for _, v := range vals {
			top = max(top, v)
		}
	}
	// Room above the bars for the legend.
	p.Y.Max = top * 1.3
	for k, vals := range groups {
		b, err := plotter.NewBarChart(plotter.Values(vals), w)
		if err != nil {
			return err
		}
		b.LineStyle.Width = vg.Length(0)
		b.Color = plotutil.Color(k)
		b.Offset = w * vg.Length(float64(k)-float64(n-1)/2)
		p.Add(b)
		p.Legend.Add(seriesNames[k], b)
	}
	p.NominalX(names...)
	width := vg.Length(max(14, 3+3*len(names))) * vg.Centimeter
	return p.Save(width, 11*vg.Centimeter, path)
}

// httpGroups are the HTTP-level percentiles per function: p50, p90 and p99 series.
func httpGroups(r *Results) ([]string, [][]float64) {
	var names []string
	groups := make([][]float64, 3)
	add := func(name string, l Latency) {
		names = append(names, name)
		groups[0] = append(groups[0], l.P50MS)
		groups[1] = append(groups[1], l.P90MS)
		groups[2] = append(groups[2], l.P99MS)
	}
	w := r.Workloads
	if w.W1 != nil && w.W1.HTTP != nil {
		add("commit-turn\n(W1, 1 client)", w.W1.HTTP.Sequential.Latency)
		add(fmt.Sprintf("commit-turn\n(W1, %d clients)", w.W1.HTTP.Concurrent.Clients), w.W1.HTTP.Concurrent.Latency)
	}
	if w.W2 != nil && w.W2.HTTP != nil {
		add("get-context\n(W2)", w.W2.HTTP.Sequential.Latency)
	}
	if w.W3 != nil && w.W3.HTTP != nil {
		add("recall\n(W3, 1 client)", w.W3.HTTP.Sequential.Latency)
		add(fmt.Sprintf("recall\n(W3, %d clients)", w.W3.HTTP.Concurrent.Clients), w.W3.HTTP.Concurrent.Latency)
	}
	if w.W5 != nil {
		add(fmt.Sprintf("get-context\n(W5, %d clients)", w.W5.Clients), w.W5.GetContext)
		add(fmt.Sprintf("commit-turn\n(W5, %d clients)", w.W5.Clients), w.W5.CommitTurn)
	}
	return names, groups
}

// Charts of the side-by-side comparison.
const (
	ChartPeersGrowth  = "peers-w2-growth.png"
	ChartPeersSpeedup = "peers-speedup.png"
)

// peerCharts draws get-context p50 against session length for agentmem and the chat peers,
// and how many times faster agentmem is on each compared figure.
func peerCharts(dir string, c *Comparison) ([]string, error) {
	var out []string
	rows := peerRows(c)
	if len(rows) == 0 {
		return out, nil
	}
	// Growth: one line for agentmem (medians), one per peer.
	type line struct {
		name string
		xys  plotter.XYs
	}
	var lines []line
	ours := map[int]float64{}
	theirs := map[string]plotter.XYs{}
	var peers []string
	for _, cr := range rows {
		var length int
		if _, err := fmt.Sscanf(cr.Figure, "W2-growth p50, %d messages", &length); err != nil {
			continue
		}
		ours[length] = cr.AgentmemMedian
		if _, ok := theirs[cr.Peer]; !ok {
			peers = append(peers, cr.Peer)
		}
		theirs[cr.Peer] = append(theirs[cr.Peer], plotter.XY{X: float64(length), Y: cr.PeerMedian})
	}
	if len(ours) > 0 {
		var xys plotter.XYs
		for _, xy := range theirs[peers[0]] {
			xys = append(xys, plotter.XY{X: xy.X, Y: ours[int(xy.X)]})
		}
		lines = append(lines, line{"agentmem (store)", xys})
		for _, id := range peers {
			lines = append(lines, line{strings.ToUpper(id) + " " + peerShort[id], theirs[id]})
		}
		p := plot.New()
		p.Title.Text = "get-context p50 (last 12 messages) vs session length, " + strings.Replace(mediansOf(c.Runs), "medians", "median", 1)
		p.X.Label.Text = "messages in the session"
		p.Y.Label.Text = "p50 latency (ms, log scale)"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		var ticks []plot.Tick
		for _, xy := range lines[0].xys {
			ticks = append(ticks, plot.Tick{Value: xy.X, Label: fmt.Sprint(xy.X)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.Legend.Top = true
		p.Legend.Left = true
		p.Legend.YOffs = -vg.Points(6)
		lo, hi := math.Inf(1), 0.0
		for i, l := range lines {
			for _, xy := range l.xys {
				lo, hi = min(lo, xy.Y), max(hi, xy.Y)
			}
			lp, sp, err := plotter.NewLinePoints(l.xys)
			if err != nil {
				return out, err
			}
			lp.Color, sp.Color = plotutil.Color(i), plotutil.Color(i)
			sp.Shape = plotutil.Shape(i)
			p.Add(lp, sp)
			p.Legend.Add(l.name, lp, sp)
		}
		// Room above the lines for the legend.
		p.Y.Min, p.Y.Max = lo/1.5, hi*8
		p.Y.Tick.Marker = powerTicks(p.Y.Min, p.Y.Max)
		if err := p.Save(18*vg.Centimeter, 11*vg.Centimeter, filepath.Join(dir, ChartPeersGrowth)); err != nil {
			return out, err
		}
		out = append(out, ChartPeersGrowth)
	}

	// Speed-up: times faster than the peer, per figure (a bar above 1 is agentmem ahead).
	var names []string
	var vals plotter.Values
	top := 1.0
	for _, cr := range rows {
		names = append(names, strings.ToUpper(cr.Peer)+"\n"+wrapFigure(cr.Figure))
		vals = append(vals, cr.Speedup())
		top = max(top, cr.Speedup())
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("How many times faster agentmem is than the peer (%s)", strings.Replace(mediansOf(c.Runs), "medians", "median", 1))
	p.Y.Label.Text = "times faster (log scale; 1 = as fast)"
	p.Y.Scale = plot.LogScale{}
	lo := 1.0
	for _, v := range vals {
		lo = min(lo, v)
	}
	p.Y.Min, p.Y.Max = min(lo/1.5, 0.5), max(top*1.5, 2)
	p.Y.Tick.Marker = powerTicks(p.Y.Min, p.Y.Max)
	// Bars are polygons from 1 (as fast) up to the speed-up, or down when agentmem is slower.
	for i, v := range vals {
		x := float64(i)
		bar, err := plotter.NewPolygon(plotter.XYs{{X: x - 0.3, Y: 1}, {X: x + 0.3, Y: 1}, {X: x + 0.3, Y: v}, {X: x - 0.3, Y: v}})
		if err != nil {
			return out, err
		}
		bar.LineStyle.Width = vg.Length(0)
		bar.Color = colorAhead
		if v < 1 {
			bar.Color = colorBehind
		}
		p.Add(bar)
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	one.Color = plotutil.Color(2)
	p.Add(one)
	p.NominalX(names...)
	width := vg.Length(max(16, 3+2.6*float64(len(names)))) * vg.Centimeter
	if err := p.Save(width, 12*vg.Centimeter, filepath.Join(dir, ChartPeersSpeedup)); err != nil {
		return out, err
	}
	return append(out, ChartPeersSpeedup), nil
}

var peerShort = map[string]string{
	PeerChatHistory:  "LangChain.js chat history",
	PeerStore:        "LangGraph.js store",
	PeerCheckpointer: "LangGraph.js checkpointer",
}

// Bar colours of the speed-up chart: agentmem ahead of the peer, or behind it.
var (
	colorAhead  = color.RGBA{R: 0x2e, G: 0x8b, B: 0x57, A: 0xff}
	colorBehind = color.RGBA{R: 0xd6, G: 0x45, B: 0x45, A: 0xff}
)

// powerTicks labels the powers of two between lo and hi (0.25, 0.5, 1, 2, 4, ...) on a log axis.
func powerTicks(lo, hi float64) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for e := math.Floor(math.Log2(lo)); math.Pow(2, e) <= hi; e++ {
		v := math.Pow(2, e)
		if v >= lo {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	return ticks
}

// wrapFigure breaks a figure's name over two lines for an axis label.
func wrapFigure(s string) string { return strings.Replace(s, ", ", "\n", 1) }
