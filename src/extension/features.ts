import type { ComparePanels } from './comparePanel';
import type { ProgressPanels } from './progressPanel';
import type { RunController } from './runs';
import type { EvaluationsTree } from './tree';

/** The features the commands act on, built by activate() beside the context. */
export interface Features {
  tree: EvaluationsTree;
  runs: RunController;
  panels: ProgressPanels;
  compare: ComparePanels;
}
