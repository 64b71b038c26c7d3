// Flink 1.14-1.20: a RuntimeContext gives its subtask index itself (compat/flink2: through TaskInfo).

import org.apache.flink.api.common.functions.RuntimeContext;

final class Compat {
    static int subtask(RuntimeContext context) {
        return context.getIndexOfThisSubtask();
    }
}
