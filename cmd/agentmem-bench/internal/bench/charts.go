package bench

import (
	"fmt"
	"path/filepath"

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
	return out, nil
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
