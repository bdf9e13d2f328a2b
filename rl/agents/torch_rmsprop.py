"""RMSprop as PyTorch (and so SB3's A2C) computes it, as a Keras optimizer.

torch.optim.RMSprop (momentum 0, not centered): v <- alpha v + (1 - alpha) g^2, w <- w - lr g /
(sqrt(v) + eps). Keras' puts eps inside the root: at SB3's A2C eps = 1e-5 small gradients' steps
are up to ~300x smaller than torch's. Keras' slot layout lets the many-seeds program stack it.
"""

from __future__ import annotations

import keras
from keras import ops

from rl.utils import private_apis


class TorchRMSprop(keras.optimizers.Optimizer):
    """`torch.optim.RMSprop(lr, alpha, eps)` (no momentum, not centered, no weight decay)."""

    def __init__(
        self,
        learning_rate: float = 0.01,
        alpha: float = 0.99,
        epsilon: float = 1e-8,
        name: str = "torch_rmsprop",
        **kwargs,
    ) -> None:
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.alpha = alpha
        self.epsilon = epsilon

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._velocities = self.add_optimizer_variables(var_list, "velocity")

    def update_step(self, gradient, variable, learning_rate) -> None:
        lr = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        velocity = self._velocities[private_apis.optimizer_variable_index(self, variable)]
        self.assign(
            velocity,
            ops.add(
                ops.multiply(self.alpha, velocity),
                ops.multiply(1.0 - self.alpha, ops.square(gradient)),
            ),
        )
        denominator = ops.add(ops.sqrt(velocity), self.epsilon)
        self.assign_sub(variable, ops.divide(ops.multiply(lr, gradient), denominator))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"alpha": self.alpha, "epsilon": self.epsilon})
        return config
