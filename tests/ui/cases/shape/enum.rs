use tool_runtime::prelude::*;

/// Turn the light on or off.
#[tool(name = "home__switch_light", effect = state_change, redact = ["on"])]
enum SwitchLight {
    On,
    Off,
}

#[derive(Serialize, ToolSchema)]
struct Light {
    on: bool,
}

impl Tool for SwitchLight {
    type Output = Light;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Light, ToolError> {
        Ok(Light { on: matches!(self, SwitchLight::On) })
    }
}

fn main() {}
