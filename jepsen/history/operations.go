package history

import "fmt"

// NoCompletion is Operation.Complete for an operation still running when the
// history ended.
const NoCompletion = -1

// Operation is one invoke paired with its completion.
type Operation struct {
	Process int
	F       Func
	// Type is OK, Fail or Info. An operation the history ended before
	// completing counts as Info: it may or may not have happened.
	Type Type
	// Invoke is the index of the invoke op.
	Invoke int
	// Complete is the index of the completion op, or NoCompletion.
	Complete int
}

// Operations validates a history (see Validate for the rules) and pairs
// every invoke with its completion, in invoke order.
func Operations(ops []Op) ([]Operation, error) {
	if len(ops) > historyOpsMax {
		return nil, fmt.Errorf("history: %d ops, more than the %d a history may hold", len(ops), historyOpsMax)
	}
	// Most operations complete, so about half the ops are invokes.
	operations := make([]Operation, 0, len(ops)/2+1)
	running := map[int]int{} // process → position in operations of its running operation
	retired := map[int]int{} // process → index of the info that retired it
	// Sized for every value sent, so that filling it never grows it.
	values := 0
	for i := range ops {
		if ops[i].Type == Invoke {
			values += len(ops[i].Sends)
		}
	}
	sentBy := make(map[string]int, values)
	for i := range ops {
		op := &ops[i]
		var previous *Op
		if i > 0 {
			previous = &ops[i-1]
		}
		if err := checkOp(op, i, previous); err != nil {
			return nil, err
		}
		if op.Type == Invoke {
			if at, busy := running[op.Process]; busy {
				return nil, fmt.Errorf("history: op %d: process %d invokes %s while op %d is still running",
					i, op.Process, op.F, operations[at].Invoke)
			}
			if info, gone := retired[op.Process]; gone {
				return nil, fmt.Errorf("history: op %d: process %d was retired by the info at op %d and may not run again",
					i, op.Process, info)
			}
			for _, send := range op.Sends {
				if first, seen := sentBy[send.Value]; seen {
					return nil, fmt.Errorf("history: op %d sends value %q, already sent by op %d; values must be unique",
						i, send.Value, first)
				}
				sentBy[send.Value] = i
			}
			running[op.Process] = len(operations)
			operations = append(operations, Operation{
				Process: op.Process, F: op.F, Type: Info, Invoke: i, Complete: NoCompletion,
			})
			continue
		}
		at, busy := running[op.Process]
		if !busy {
			return nil, fmt.Errorf("history: op %d: %s completion of %s by process %d, which is running nothing",
				i, op.Type, op.F, op.Process)
		}
		operation := &operations[at]
		if operation.F != op.F {
			return nil, fmt.Errorf("history: op %d completes %s, but process %d invoked %s at op %d",
				i, op.F, op.Process, operation.F, operation.Invoke)
		}
		if err := checkCompletion(&ops[operation.Invoke], op); err != nil {
			return nil, err
		}
		operation.Type = op.Type
		operation.Complete = i
		delete(running, op.Process)
		if op.Type == Info {
			retired[op.Process] = i
		}
	}
	return operations, nil
}

// Validate reports the first thing wrong with a history, or nil.
//
// The rules: ops are numbered by position; times never go back; each
// process alternates invoke and completion of the same function, and runs
// nothing after an info; every sent value is unique and non-empty; each op
// carries only the payload its function and type call for; an ok send
// acknowledges exactly the values its invoke sent, in order; offsets are
// never below OffsetUnknown, and records' offsets are never unknown.
func Validate(ops []Op) error {
	_, err := Operations(ops)
	return err
}
