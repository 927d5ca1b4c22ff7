import type { ComparePanels } from './compare/comparePanel';
import type { RunDetailsPanels } from './runDetails/runDetailsPanel';
import type { RunController } from './runs/runs';
import type { EvaluationsTree } from './evaluations/tree';

/** The features the commands act on, built by activate() beside the context. */
export interface Features {
  tree: EvaluationsTree;
  runs: RunController;
  panels: RunDetailsPanels;
  compare: ComparePanels;
}
