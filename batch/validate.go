package batch

import (
	"fmt"
	"slices"

	"dspk/detect"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
)

// checkOptions refuses, before any recording is opened, the settings that
// dspk detect and dspk sort refuse whatever the recording: the sort's
// ([pipeline.SortOptions.Validate]) and a detect plan's templates, which
// must load with the plan's template length.
func checkOptions(kind string, opt Options) error {
	if kind == KindSort {
		if err := opt.Sort.Validate(); err != nil {
			return fmt.Errorf("batch: %w", err)
		}
	}
	if opt.Templates != "" {
		if _, err := detect.LoadTemplates(opt.Templates, opt.Config.NT); err != nil {
			return fmt.Errorf("batch: -templates: %w", err)
		}
	}
	return nil
}

// checkRecording refuses the plan's settings that the recording rec of
// probe pr cannot honour, by the checks dspk detect and dspk sort make
// before their work: the pipeline's configuration against the recording
// and probe ([pipeline.Prepare]), the probe checks of the configuration
// and, for a sort plan, of the sort's settings.
func (pl *Plan) checkRecording(rec recording.Recording, pr *probe.Probe) error {
	o := pl.Options
	p, err := pipeline.Prepare(rec, pr, o.Config)
	if err != nil {
		return err
	}
	p.Close()
	if err := o.Config.CheckProbe(pr, slices.Contains(o.Given, "nearest_chans")); err != nil {
		return err
	}
	if pl.Kind == KindSort {
		return o.Sort.CheckProbe(pr)
	}
	return nil
}
