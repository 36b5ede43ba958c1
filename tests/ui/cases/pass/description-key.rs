// `description = "..."` describes a tool without a doc comment (and wins over one), and
// `#[schema(description = "...")]` does the same for fields and types.
use serde_json::json;
use tool_runtime::prelude::*;

#[derive(Deserialize, ToolSchema)]
#[schema(description = "A point on the map.")]
struct Point {
    #[schema(description = "Degrees north.", range(min = -90, max = 90))]
    lat: f64,
    #[schema(description = "Degrees east.", range(min = -180, max = 180))]
    lon: f64,
}

#[tool(name = "maps__distance", effect = read_only, redact = ["metres"], description = "Distance between two points, in metres.")]
struct Distance {
    from: Point,
    to: Point,
}

/// The doc comment says one thing...
#[tool(name = "maps__nearest_city", effect = read_only, redact = ["metres"], description = "...the key says another, and wins.")]
struct NearestCity {
    /// Where to look from.
    #[schema(description = "The key wins here too.")]
    at: Point,
}

#[derive(Serialize, ToolSchema)]
struct Metres {
    metres: f64,
}

impl Tool for Distance {
    type Output = Metres;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Metres, ToolError> {
        Ok(Metres { metres: (self.from.lat - self.to.lat).hypot(self.from.lon - self.to.lon) })
    }
}

impl Tool for NearestCity {
    type Output = Metres;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Metres, ToolError> {
        Ok(Metres { metres: self.at.lat.hypot(self.at.lon) })
    }
}

fn main() {
    let spec = Distance::spec();
    assert_eq!(spec.description(), "Distance between two points, in metres.");
    let from = &spec.input_schema().to_json()["properties"]["from"];
    assert_eq!(from["description"], "A point on the map.");
    assert_eq!(from["properties"]["lat"], json!({"type": "number", "description": "Degrees north.", "minimum": -90.0, "maximum": 90.0}));

    let spec = NearestCity::spec();
    assert_eq!(spec.description(), "...the key says another, and wins.");
    assert_eq!(spec.input_schema().to_json()["properties"]["at"]["description"], "The key wins here too.");
}
