// Flink 2.x: a RuntimeContext gives its subtask index through getTaskInfo() (from 1.19 on; 2.0
// removed getIndexOfThisSubtask, which compat/flink1 uses).

import org.apache.flink.api.common.functions.RuntimeContext;

final class Compat {
    static int subtask(RuntimeContext context) {
        return context.getTaskInfo().getIndexOfThisSubtask();
    }
}
