"""torch.optim.optimizer as far as the probe hooks it: the global step pre-hooks, and an Optimizer whose step runs
them."""
_step_pre_hooks = []


def register_optimizer_step_pre_hook(hook):
    _step_pre_hooks.append(hook)


class Optimizer:
    def __init__(self, params, defaults=None):
        self.param_groups = [{"params": list(params), **(defaults or {})}]
        self.state = {}

    def zero_grad(self, set_to_none=True):
        pass

    def load_state_dict(self, state_dict):
        pass

    def add_param_group(self, param_group):
        self.param_groups.append(dict(param_group))

    def step(self, closure=None):
        for hook in _step_pre_hooks:
            hook(self, (), {})
